#!/usr/bin/env python3
"""train-vs-pytorch.py - PyTorch's CPU training rate on the shape ggml-train trains.

The model is the one train/graph.go builds (LLaMA: token embedding, per block RMS norm,
Q/K/V/O projections without bias, RoPE mode 0 on Q and K, causal softmax attention, RMS norm,
SwiGLU feed-forward; a final RMS norm and an untied output matrix), trained on uniformly
random tokens with AdamW (betas 0.9/0.99, weight decay 0.1, gradient clipping at 1), as
`ggml-train -bench` does. It prints the median step time over the steps after the first two
and the rate in tokens/s, in the same words as `ggml-train -bench`:

    bench: median step 512.3 ms over 8 steps: 3998 tokens/s

Needs python3-torch (Debian: `scripts/ci-install.sh torch`). Default shape: the default
model of doc/default-model.md (n_embd 256, 4 blocks, 8 heads, n_ff 704, vocabulary 2048,
context 256, batch 8), 2 threads.
"""
import argparse
import math
import os
import statistics
import sys
import time


def _threads_arg():
    for i, a in enumerate(sys.argv):
        if a in ("--threads", "-t") and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "2"


# Debian's torch calls the system BLAS (OpenBLAS with libopenblas0-pthread), whose own thread
# count torch.set_num_threads does not set: fix it before the library loads
os.environ.setdefault("OPENBLAS_NUM_THREADS", _threads_arg())
# OpenMP's threads and OpenBLAS's spin while they wait for work; on as many cores as threads
# they spin against each other (measured: 300-900 tokens/s instead of 2,100 on a loaded
# 2-core machine), so they sleep instead
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(n_ctx, hd, base):
    inv = base ** (-torch.arange(0, hd, 2, dtype=torch.float32) / hd)
    ang = torch.arange(n_ctx, dtype=torch.float32)[:, None] * inv[None, :]  # [T, hd/2]
    return ang.cos(), ang.sin()


def rope(x, cos, sin):
    # mode 0: adjacent pairs (x[2i], x[2i+1]) rotate by pos·base^(-2i/hd); x is [B, nh, T, hd]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    r0 = x0 * cos - x1 * sin
    r1 = x0 * sin + x1 * cos
    return torch.stack((r0, r1), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, e, nh, ff, eps):
        super().__init__()
        self.nh = nh
        self.attn_norm = RMSNorm(e, eps)
        self.wq = nn.Linear(e, e, bias=False)
        self.wk = nn.Linear(e, e, bias=False)
        self.wv = nn.Linear(e, e, bias=False)
        self.wo = nn.Linear(e, e, bias=False)
        self.ffn_norm = RMSNorm(e, eps)
        self.gate = nn.Linear(e, ff, bias=False)
        self.up = nn.Linear(e, ff, bias=False)
        self.down = nn.Linear(ff, e, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, e = x.shape
        hd = e // self.nh
        h = self.attn_norm(x)
        q = self.wq(h).view(B, T, self.nh, hd).transpose(1, 2)
        k = self.wk(h).view(B, T, self.nh, hd).transpose(1, 2)
        v = self.wv(h).view(B, T, self.nh, hd).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + mask, dim=-1)
        a = (att @ v).transpose(1, 2).reshape(B, T, e)
        x = x + self.wo(a)
        h = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self, vocab, e, layers, nh, ff, ctx, eps=1e-5, base=10000.0):
        super().__init__()
        self.tok = nn.Embedding(vocab, e)
        self.blocks = nn.ModuleList(Block(e, nh, ff, eps) for _ in range(layers))
        self.norm = RMSNorm(e, eps)
        self.out = nn.Linear(e, vocab, bias=False)
        cos, sin = rope_tables(ctx, e // nh, base)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)
        self.register_buffer("mask", torch.full((ctx, ctx), float("-inf")).triu(1))

    def forward(self, ids):
        x = self.tok(ids)
        for b in self.blocks:
            x = b(x, self.cos, self.sin, self.mask)
        return self.out(self.norm(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--embd", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--ff", type=int, default=0, help="0: about 8/3 of --embd, a multiple of 32 (as train.Config)")
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", "-t", type=int, default=2)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    ff = a.ff or (a.embd * 8 // 3 + 31) // 32 * 32
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    m = Model(a.vocab, a.embd, a.layers, a.heads, ff, a.ctx)
    n = sum(p.numel() for p in m.parameters())
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1)
    print(f"bench: pytorch {torch.__version__}, n_vocab {a.vocab}, n_embd {a.embd}, n_layer {a.layers}, n_head {a.heads}, "
          f"n_ff {ff}, n_ctx {a.ctx}, batch {a.batch}: {n / 1e6:.2f}M parameters, {a.threads} threads, {a.steps} steps", flush=True)
    g = torch.Generator().manual_seed(a.seed)
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        ids = torch.randint(0, a.vocab, (a.batch, a.ctx + 1), generator=g)
        logits = m(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, a.vocab), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        times.append(time.perf_counter() - t0)
    steady = times[2:] or times
    med = statistics.median(steady)
    print(f"bench: median step {med * 1000:.1f} ms over {len(steady)} steps: {a.batch * a.ctx / med:.0f} tokens/s", flush=True)


if __name__ == "__main__":
    main()
