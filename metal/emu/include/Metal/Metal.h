// Metal/Metal.h - the subset of Apple's Metal API that the backend (metal/*.m) calls, declared
// with Apple's names, selectors, types and enum values (from Apple's Metal documentation), for
// building and type-checking the host code on Linux against GNUstep Foundation. Not Apple's
// header; the emulator (metal/emu/device.m) implements it. Nullability and ownership
// annotations are left out (GCC's Objective-C lacks them); so are blocks: the one block-typed
// parameter we pass (always nil) is declared as a block only where the compiler has blocks.

#ifndef GGML_METAL_EMU_METAL_H
#define GGML_METAL_EMU_METAL_H

#import <Foundation/Foundation.h>

typedef NSUInteger MTLResourceOptions;
enum {
    MTLResourceCPUCacheModeDefaultCache  = 0,
    MTLResourceCPUCacheModeWriteCombined = 1,
    MTLResourceStorageModeShared         = 0 << 4,
    MTLResourceStorageModeManaged        = 1 << 4,
    MTLResourceStorageModePrivate        = 2 << 4,
};

typedef NSInteger MTLGPUFamily;
enum {
    MTLGPUFamilyApple1  = 1001,
    MTLGPUFamilyApple2  = 1002,
    MTLGPUFamilyApple3  = 1003,
    MTLGPUFamilyApple4  = 1004,
    MTLGPUFamilyApple5  = 1005,
    MTLGPUFamilyApple6  = 1006,
    MTLGPUFamilyApple7  = 1007,
    MTLGPUFamilyApple8  = 1008,
    MTLGPUFamilyApple9  = 1009,
    MTLGPUFamilyMac2    = 2002,
    MTLGPUFamilyCommon1 = 3001,
    MTLGPUFamilyCommon2 = 3002,
    MTLGPUFamilyCommon3 = 3003,
    MTLGPUFamilyMetal3  = 5001,
};

typedef NSUInteger MTLCommandBufferStatus;
enum {
    MTLCommandBufferStatusNotEnqueued = 0,
    MTLCommandBufferStatusEnqueued    = 1,
    MTLCommandBufferStatusCommitted   = 2,
    MTLCommandBufferStatusScheduled   = 3,
    MTLCommandBufferStatusCompleted   = 4,
    MTLCommandBufferStatusError       = 5,
};

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

@protocol MTLDevice;
@protocol MTLCommandQueue;
@protocol MTLCommandBuffer;
@protocol MTLComputeCommandEncoder;
@protocol MTLComputePipelineState;
@protocol MTLBuffer;
@protocol MTLLibrary;
@protocol MTLFunction;

@interface MTLCompileOptions : NSObject <NSCopying> {
@private
    BOOL _fastMathEnabled; // the emulator's storage (GCC's runtime needs declared ivars)
}
@property (readwrite, nonatomic) BOOL fastMathEnabled;
@end

@protocol MTLResource <NSObject>
@property (readonly) id<MTLDevice> device;
@end

@protocol MTLBuffer <MTLResource>
@property (readonly) NSUInteger length;
- (void *)contents;
@end

@protocol MTLFunction <NSObject>
@property (readonly) NSString * name;
@end

@protocol MTLLibrary <NSObject>
- (id<MTLFunction>)newFunctionWithName:(NSString *)functionName;
@end

@protocol MTLComputePipelineState <NSObject>
@property (readonly) NSUInteger maxTotalThreadsPerThreadgroup;
@property (readonly) NSUInteger threadExecutionWidth;
@end

@protocol MTLCommandEncoder <NSObject>
- (void)endEncoding;
@end

@protocol MTLComputeCommandEncoder <MTLCommandEncoder>
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state;
- (void)setBytes:(const void *)bytes length:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)setBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)setThreadgroupMemoryLength:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
@end

@protocol MTLCommandBuffer <NSObject>
@property (readonly) MTLCommandBufferStatus status;
@property (readonly) NSError * error;
- (id<MTLComputeCommandEncoder>)computeCommandEncoder;
- (void)enqueue;
- (void)commit;
- (void)waitUntilCompleted;
@end

@protocol MTLCommandQueue <NSObject>
- (id<MTLCommandBuffer>)commandBuffer;
- (id<MTLCommandBuffer>)commandBufferWithUnretainedReferences;
@end

@protocol MTLDevice <NSObject>
@property (readonly) NSString * name;
@property (readonly) NSUInteger maxBufferLength;
@property (readonly) uint64_t recommendedMaxWorkingSetSize;
@property (readonly) BOOL hasUnifiedMemory;
- (BOOL)supportsFamily:(MTLGPUFamily)gpuFamily;
- (id<MTLCommandQueue>)newCommandQueue;
- (id<MTLBuffer>)newBufferWithBytesNoCopy:(void *)pointer
                                   length:(NSUInteger)length
                                  options:(MTLResourceOptions)options
                              deallocator:(GGML_METAL_EMU_DEALLOCATOR)deallocator;
- (id<MTLLibrary>)newLibraryWithSource:(NSString *)source
                               options:(MTLCompileOptions *)options
                                 error:(NSError **)error;
- (id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)computeFunction
                                                             error:(NSError **)error;
@end

#ifdef __cplusplus
extern "C" {
#endif
id<MTLDevice> MTLCreateSystemDefaultDevice(void);
#ifdef __cplusplus
}
#endif

#endif // GGML_METAL_EMU_METAL_H
