// device.m - the emulator's fake of the Metal objects the backend uses (include/Metal/Metal.h),
// in plain Objective-C with manual retain/release, on GNUstep Foundation.
//
// MTLCreateSystemDefaultDevice returns a new device "ggml-go Metal emulator" configured from the
// environment when it is created:
//   GGML_METAL_EMU_NO_DEVICE=1        no device (MTLCreateSystemDefaultDevice returns nil)
//   GGML_METAL_EMU_NO_SIMDGROUP=1     a GPU without SIMD-group reductions: supportsFamily: is NO
//                                     for Apple7+, Metal3 (and the kernels' simd_* abort)
//   GGML_METAL_EMU_MAX_BUFFER=BYTES   maxBufferLength (default 1 GiB)
// Buffers wrap host memory (newBufferWithBytesNoCopy: page-aligned pointer and length, as
// Metal requires; nil otherwise). newLibraryWithSource: checks that the source declares every
// kernel of the compiled table and newFunctionWithName: finds a kernel only when the source
// declares it, so the embedded source and the emulated kernels cannot drift apart. Command
// buffers run their dispatches in encoding order when committed (a queue executes its command
// buffers in commit order); dispatch errors put the command buffer into
// MTLCommandBufferStatusError with an NSError.

#import <Metal/Metal.h>

#include "emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int env_flag(const char * name) {
    const char * v = getenv(name);
    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

// ---------------------------------------------------------------------------------------------

@implementation MTLCompileOptions
- (BOOL)fastMathEnabled { return _fastMathEnabled; }
- (void)setFastMathEnabled:(BOOL)enabled { _fastMathEnabled = enabled; }
- (id)init {
    if ((self = [super init]) != nil) {
        _fastMathEnabled = YES;
    }
    return self;
}
- (id)copyWithZone:(NSZone *)zone {
    MTLCompileOptions * o = [[MTLCompileOptions allocWithZone:zone] init];
    [o setFastMathEnabled:_fastMathEnabled];
    return o;
}
@end

// ---------------------------------------------------------------------------------------------

@interface GgmlEmuDevice : NSObject <MTLDevice> {
@public
    NSUInteger maxBuffer;
    BOOL simdgroup;
}
@end

@interface GgmlEmuBuffer : NSObject <MTLBuffer> {
@public
    id<MTLDevice> dev;
    void * ptr;
    NSUInteger len;
}
@end

@implementation GgmlEmuBuffer
- (void)dealloc {
    [dev release];
    [super dealloc];
}
@end

@interface GgmlEmuFunction : NSObject <MTLFunction> {
@public
    NSString * fname;
    const ggml_metal_emu_kernel * kernel;
}
@end

@implementation GgmlEmuFunction
- (void)dealloc {
    [fname release];
    [super dealloc];
}
@end

@interface GgmlEmuLibrary : NSObject <MTLLibrary> {
@public
    NSString * source;
}
@end

@implementation GgmlEmuLibrary
- (id<MTLFunction>)newFunctionWithName:(NSString *)functionName {
    const char * name = [functionName UTF8String];
    char decl[256];
    snprintf(decl, sizeof(decl), "kernel void %s(", name);
    const ggml_metal_emu_kernel * k = ggml_metal_emu_kernel_find(name);
    if (k == NULL || strstr([source UTF8String], decl) == NULL) {
        return nil;
    }
    GgmlEmuFunction * f = [[GgmlEmuFunction alloc] init];
    f->fname = [functionName copy];
    f->kernel = k;
    return f;
}
- (void)dealloc {
    [source release];
    [super dealloc];
}
@end

@interface GgmlEmuPipeline : NSObject <MTLComputePipelineState> {
@public
    const ggml_metal_emu_kernel * kernel;
    BOOL simdgroup;
}
@end

@implementation GgmlEmuPipeline
@end

// one recorded dispatch: the bindings are copied at encoding time (setBytes copies its bytes)
typedef struct {
    const ggml_metal_emu_kernel * kernel;
    ggml_metal_emu_dispatch d;
    unsigned char bytes[sizeof(double) * 128]; // setBytes data of index 0
    size_t nbytes;
} emu_cmd;

@interface GgmlEmuCommandBuffer : NSObject <MTLCommandBuffer> {
@public
    emu_cmd * cmds;
    size_t ncmds, cap;
    MTLCommandBufferStatus st;
    NSError * err;
    BOOL encoding;
}
- (emu_cmd *)append;
@end

@interface GgmlEmuEncoder : NSObject <MTLComputeCommandEncoder> {
@public
    GgmlEmuCommandBuffer * cb; // not retained: the command buffer outlives its encoder's use
    GgmlEmuPipeline * pipeline;
    emu_cmd cur;
    BOOL ended;
}
@end

@implementation GgmlEmuEncoder
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state {
    pipeline = (GgmlEmuPipeline *) state;
}
- (void)setBytes:(const void *)bytes length:(NSUInteger)length atIndex:(NSUInteger)index {
    if (index != 0 || length > sizeof(cur.bytes)) {
        fprintf(stderr, "ggml_metal_emu: setBytes of %lu bytes at index %lu: the emulator takes at most %zu at index 0\n",
                (unsigned long) length, (unsigned long) index, sizeof(cur.bytes));
        abort();
    }
    memcpy(cur.bytes, bytes, length);
    cur.nbytes = length;
}
- (void)setBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index {
    if (index == 0 || index >= GGML_METAL_EMU_MAX_BINDINGS) {
        fprintf(stderr, "ggml_metal_emu: setBuffer at index %lu: the kernels read buffers 1..%d\n",
                (unsigned long) index, GGML_METAL_EMU_MAX_BINDINGS - 1);
        abort();
    }
    // every buffer the host binds comes from this emulator, so its storage is read directly
    GgmlEmuBuffer * b = (GgmlEmuBuffer *) buffer;
    if (b != nil && offset > b->len) {
        fprintf(stderr, "ggml_metal_emu: setBuffer offset %lu beyond the buffer's %lu bytes\n",
                (unsigned long) offset, (unsigned long) b->len);
        abort();
    }
    cur.d.bind[index] = b == nil ? NULL : (char *) b->ptr + offset;
}
- (void)setThreadgroupMemoryLength:(NSUInteger)length atIndex:(NSUInteger)index {
    if (index != 0) {
        fprintf(stderr, "ggml_metal_emu: threadgroup memory at index %lu: the kernels use index 0\n", (unsigned long) index);
        abort();
    }
    cur.d.tg_memory = length;
}
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup {
    if (ended || pipeline == nil) {
        fprintf(stderr, "ggml_metal_emu: dispatch %s\n", ended ? "after endEncoding" : "without a pipeline state");
        abort();
    }
    emu_cmd * c = [cb append];
    *c = cur;
    c->kernel = pipeline->kernel;
    c->d.bind[0] = NULL; // set at execution, when c no longer moves
    c->d.grid[0] = threadgroupsPerGrid.width;
    c->d.grid[1] = threadgroupsPerGrid.height;
    c->d.grid[2] = threadgroupsPerGrid.depth;
    c->d.tg[0] = threadsPerThreadgroup.width;
    c->d.tg[1] = threadsPerThreadgroup.height;
    c->d.tg[2] = threadsPerThreadgroup.depth;
}
- (void)endEncoding {
    ended = YES;
    cb->encoding = NO;
}
@end

@implementation GgmlEmuCommandBuffer
- (emu_cmd *)append {
    if (ncmds == cap) {
        cap = cap == 0 ? 64 : 2 * cap;
        cmds = realloc(cmds, cap * sizeof(emu_cmd));
        if (cmds == NULL) {
            fprintf(stderr, "ggml_metal_emu: out of memory\n");
            abort();
        }
    }
    return &cmds[ncmds++];
}
- (MTLCommandBufferStatus)status { return st; }
- (NSError *)error { return err; }
- (id<MTLComputeCommandEncoder>)computeCommandEncoder {
    if (st != MTLCommandBufferStatusNotEnqueued || encoding) {
        return nil;
    }
    encoding = YES;
    GgmlEmuEncoder * e = [[GgmlEmuEncoder alloc] init];
    e->cb = self;
    return [e autorelease];
}
- (void)commit {
    if (encoding) {
        fprintf(stderr, "ggml_metal_emu: commit while an encoder has not ended encoding\n");
        abort();
    }
    if (st >= MTLCommandBufferStatusCommitted) {
        fprintf(stderr, "ggml_metal_emu: command buffer committed twice\n");
        abort();
    }
    st = MTLCommandBufferStatusCommitted;
    char msg[256];
    for (size_t i = 0; i < ncmds; i++) {
        emu_cmd * c = &cmds[i];
        c->d.bind[0] = c->nbytes > 0 ? c->bytes : NULL;
        if (ggml_metal_emu_run(c->kernel, &c->d, msg, sizeof(msg)) != 0) {
            NSString * s = [[NSString alloc] initWithUTF8String:msg];
            NSDictionary * info = [[NSDictionary alloc] initWithObjectsAndKeys:s, NSLocalizedDescriptionKey, nil];
            err = [[NSError alloc] initWithDomain:@"MTLCommandBufferErrorDomain" code:1 userInfo:info];
            [info release];
            [s release];
            st = MTLCommandBufferStatusError;
            return;
        }
    }
    st = MTLCommandBufferStatusCompleted;
}
- (void)waitUntilCompleted {
    if (st < MTLCommandBufferStatusCommitted) {
        fprintf(stderr, "ggml_metal_emu: waitUntilCompleted on an uncommitted command buffer\n");
        abort();
    }
}
- (void)dealloc {
    free(cmds);
    [err release];
    [super dealloc];
}
@end

@interface GgmlEmuQueue : NSObject <MTLCommandQueue>
@end

@implementation GgmlEmuQueue
- (id<MTLCommandBuffer>)commandBufferWithUnretainedReferences {
    return [[[GgmlEmuCommandBuffer alloc] init] autorelease]; // autoreleased, as Metal's
}
@end

@implementation GgmlEmuDevice
- (NSString *)name { return @"ggml-go Metal emulator"; }
- (NSUInteger)maxBufferLength { return maxBuffer; }
// Apple families 1..9 (consecutive values from MTLGPUFamilyApple1): all of them with SIMD-group
// reductions, up to Apple6 without; Metal3 only with them; any other family: NO
- (BOOL)supportsFamily:(MTLGPUFamily)gpuFamily {
    const NSInteger apple = gpuFamily - MTLGPUFamilyApple1 + 1;
    if (apple >= 1 && apple <= 9) {
        return simdgroup || apple <= 6;
    }
    return gpuFamily == MTLGPUFamilyMetal3 ? simdgroup : NO;
}
- (id<MTLCommandQueue>)newCommandQueue {
    return [[GgmlEmuQueue alloc] init];
}
- (id<MTLBuffer>)newBufferWithBytesNoCopy:(void *)pointer
                                   length:(NSUInteger)length
                                  options:(MTLResourceOptions)options
                              deallocator:(GGML_METAL_EMU_DEALLOCATOR)deallocator {
    const NSUInteger page = (NSUInteger) sysconf(_SC_PAGESIZE);
    // bits 4..7 of the options are the storage mode; the backend asks for shared storage only
    if (deallocator != nil || (options & (0xfUL << 4)) != MTLResourceStorageModeShared) {
        return nil; // a deallocator or another storage mode: not emulated
    }
    if (pointer == NULL || ((uintptr_t) pointer % page) != 0 || length == 0 || length % page != 0 || length > maxBuffer) {
        return nil;
    }
    GgmlEmuBuffer * b = [[GgmlEmuBuffer alloc] init];
    b->dev = [self retain];
    b->ptr = pointer;
    b->len = length;
    return b;
}
- (id<MTLLibrary>)newLibraryWithSource:(NSString *)source
                               options:(MTLCompileOptions *)options
                                 error:(NSError **)error {
    (void) options;
    const char * src = [source UTF8String];
    for (int i = 0; i < ggml_metal_emu_kernel_count(); i++) {
        char decl[256];
        snprintf(decl, sizeof(decl), "kernel void %s(", ggml_metal_emu_kernel_name(i));
        if (src == NULL || strstr(src, decl) == NULL) {
            if (error != NULL) {
                NSString * s = [[NSString alloc] initWithFormat:@"the source does not declare %s, which the emulator has",
                                ggml_metal_emu_kernel_name(i)];
                NSDictionary * info = [[NSDictionary alloc] initWithObjectsAndKeys:s, NSLocalizedDescriptionKey, nil];
                *error = [[[NSError alloc] initWithDomain:@"MTLLibraryErrorDomain" code:3 userInfo:info] autorelease];
                [info release];
                [s release];
            }
            return nil;
        }
    }
    GgmlEmuLibrary * l = [[GgmlEmuLibrary alloc] init];
    l->source = [source copy];
    return l;
}
- (id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)computeFunction
                                                             error:(NSError **)error {
    (void) error;
    GgmlEmuPipeline * p = [[GgmlEmuPipeline alloc] init];
    p->kernel = ((GgmlEmuFunction *) computeFunction)->kernel;
    p->simdgroup = simdgroup;
    return p;
}
@end

id<MTLDevice> MTLCreateSystemDefaultDevice(void) {
    if (env_flag("GGML_METAL_EMU_NO_DEVICE")) {
        return nil;
    }
    GgmlEmuDevice * d = [[GgmlEmuDevice alloc] init];
    d->simdgroup = !env_flag("GGML_METAL_EMU_NO_SIMDGROUP");
    d->maxBuffer = 1ull << 30;
    const char * mb = getenv("GGML_METAL_EMU_MAX_BUFFER");
    if (mb != NULL && mb[0] != '\0') {
        unsigned long long v = strtoull(mb, NULL, 10);
        if (v > 0) {
            d->maxBuffer = (NSUInteger) v;
        }
    }
    return d;
}
