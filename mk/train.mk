# Training throughput (not in CI: needs python3-torch, scripts/ci-install.sh torch)

.PHONY: train-vs-pytorch
# ggml-train against PyTorch on the CPU, default model's shape, interleaved rounds
# (ROUNDS, STEPS, THREADS: see scripts/train-vs-pytorch.sh)
train-vs-pytorch:
	@$(call require,python3,python3)
	scripts/train-vs-pytorch.sh
