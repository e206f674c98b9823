// Metal/Metal.h - stand-in for Apple's Metal framework header, used on Linux to type-check and
// build the backend's host code (metal/ggml-metal.m, metal/ggml-metal-ops.m, ggml-metal-impl.h)
// against GNUstep Foundation. It declares exactly the part of the Metal API those files use, under
// Apple's names, selectors, parameter types and enum values; the emulator (metal/emu/device.m)
// implements it. Written for this project; it is not Apple's header.
//
// Checked on 2026-12-03 against Apple's Metal documentation (developer.apple.com/documentation/
// metal: declarations, symbol identifiers, property/method kind, availability). Apple's pages do
// not print numeric enum values; those come from the .NET Metal binding reference
// (learn.microsoft.com: resource options, command buffer status), a published diff of the SDK's
// MTLDevice.h (the Apple GPU families) and two independent bindings (Metal3 = 5001). Every
// selector, parameter and result type, property attribute and value below matched; the one
// correction was MTLResource's parent protocol. metal/emu/README.md lists what was checked and
// what changed. Not confirmed here:
//   - anything the documentation does not show, e.g. attributes Apple's header adds to these
//     declarations (availability and deprecation macros, NS_RETURNS_RETAINED);
//   - that Apple's real headers accept the host code with -fno-objc-arc: only a Mac can build it.
// Known, not a mismatch: fastMathEnabled is deprecated since macOS 15 / iOS 18 (Apple's
// replacement is mathMode, macOS 15+); the host still sets it because it supports older systems,
// so a build with a macOS 15+ deployment target warns there.
//
// Deliberate differences from Apple's header, none of which changes a type or a selector:
//   - no nullability or ownership annotations (GCC's Objective-C has none); the nullable results
//     are noted in comments;
//   - NS_ENUM/NS_OPTIONS types are a typedef of the same underlying integer type plus an anonymous
//     enum of the constants (C before C23 has no enums with a fixed underlying type);
//   - the deallocator block parameter is declared as a block only where the compiler has blocks
//     (the host always passes nil);
//   - MTLCompileOptions declares one private instance variable: the emulator's storage, because the
//     GCC runtime needs every ivar in the @interface. It is not part of the API.

#ifndef GGML_METAL_EMU_METAL_H
#define GGML_METAL_EMU_METAL_H

#import <Foundation/Foundation.h>

// --- types and constants -------------------------------------------------------------------

// MTLResourceOptions (NS_OPTIONS over NSUInteger): storage mode in bits 4..7, so
// MTLResourceStorageModeShared is MTLStorageModeShared (0) shifted left by 4.
typedef NSUInteger MTLResourceOptions;
enum {
    MTLResourceStorageModeShared = 0UL << 4,
};

// MTLGPUFamily (NS_ENUM over NSInteger). The Apple families are consecutive (Apple1 = 1001 ...
// Apple9 = 1009), which ggml_backend_metal_supports_family relies on: family n is Apple1 + n - 1.
typedef NSInteger MTLGPUFamily;
enum {
    MTLGPUFamilyApple1 = 1001,
    MTLGPUFamilyApple7 = 1007,
    MTLGPUFamilyMetal3 = 5001,
};

// MTLCommandBufferStatus (NS_ENUM over NSUInteger): the whole enum, since it is what the host
// reads back from a command buffer.
typedef NSUInteger MTLCommandBufferStatus;
enum {
    MTLCommandBufferStatusNotEnqueued = 0,
    MTLCommandBufferStatusEnqueued    = 1,
    MTLCommandBufferStatusCommitted   = 2,
    MTLCommandBufferStatusScheduled   = 3,
    MTLCommandBufferStatusCompleted   = 4,
    MTLCommandBufferStatusError       = 5,
};

// MTLSize: three NSUInteger extents; MTLSizeMake is an inline function in Apple's header too.
typedef struct {
    NSUInteger width, height, depth;
} MTLSize;

static inline MTLSize MTLSizeMake(NSUInteger width, NSUInteger height, NSUInteger depth) {
    MTLSize s;
    s.width = width;
    s.height = height;
    s.depth = depth;
    return s;
}

#if defined(__BLOCKS__)
#define GGML_METAL_EMU_DEALLOCATOR void (^)(void * pointer, NSUInteger length)
#else
#define GGML_METAL_EMU_DEALLOCATOR void *
#endif

// --- protocols and classes -----------------------------------------------------------------

@protocol MTLDevice;
@protocol MTLFunction;

// MTLCompileOptions: a class (NSObject, NSCopying); fastMathEnabled is a read-write property.
@interface MTLCompileOptions : NSObject <NSCopying> {
@private
    BOOL _fastMathEnabled;
}
@property (readwrite, nonatomic) BOOL fastMathEnabled;
@end

// Buffers: MTLBuffer refines MTLResource, which refines MTLAllocation (SDKs for macOS 15 / iOS 18
// and later; MTLResource refined NSObject directly before). The host only passes buffers along.
@protocol MTLAllocation <NSObject>
@end

@protocol MTLResource <MTLAllocation>
@end

@protocol MTLBuffer <MTLResource>
@end

@protocol MTLFunction <NSObject>
@end

@protocol MTLLibrary <NSObject>
- (id<MTLFunction>)newFunctionWithName:(NSString *)functionName; // nil: no such function
@end

@protocol MTLComputePipelineState <NSObject>
@end

@protocol MTLCommandEncoder <NSObject>
- (void)endEncoding;
@end

@protocol MTLComputeCommandEncoder <MTLCommandEncoder>
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state;
- (void)setBytes:(const void *)bytes length:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)setBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index; // buffer may be nil
- (void)setThreadgroupMemoryLength:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
@end

@protocol MTLCommandBuffer <NSObject>
@property (readonly) MTLCommandBufferStatus status;
@property (readonly) NSError * error;                        // nil unless the GPU reported one
- (id<MTLComputeCommandEncoder>)computeCommandEncoder;       // nil on failure
- (void)commit;
- (void)waitUntilCompleted;
@end

@protocol MTLCommandQueue <NSObject>
- (id<MTLCommandBuffer>)commandBufferWithUnretainedReferences; // nil on failure
@end

@protocol MTLDevice <NSObject>
@property (readonly) NSString * name;
@property (readonly) NSUInteger maxBufferLength;             // macOS 10.14+, iOS 12+
- (BOOL)supportsFamily:(MTLGPUFamily)gpuFamily;              // macOS 10.15+, iOS 13+
- (id<MTLCommandQueue>)newCommandQueue;                      // nil on failure
- (id<MTLBuffer>)newBufferWithBytesNoCopy:(void *)pointer    // nil on failure
                                   length:(NSUInteger)length
                                  options:(MTLResourceOptions)options
                              deallocator:(GGML_METAL_EMU_DEALLOCATOR)deallocator;
- (id<MTLLibrary>)newLibraryWithSource:(NSString *)source   // nil (and *error) on failure
                               options:(MTLCompileOptions *)options
                                 error:(NSError **)error;
- (id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)computeFunction
                                                             error:(NSError **)error;
@end

#ifdef __cplusplus
extern "C" {
#endif
// The system's default GPU, returned retained (the caller releases it); nil when there is none.
id<MTLDevice> MTLCreateSystemDefaultDevice(void);
#ifdef __cplusplus
}
#endif

#endif // GGML_METAL_EMU_METAL_H
