# mk/models.mk - the runner against llama.cpp's outputs, included by the Makefile.
#
#   LLaMA runner (llama/, cmd/ggml-llama): reference agreement with llama.cpp b1882 on the models
# of shared/models, checked by its compare.py (needs Python 3 with numpy: Debian python3-numpy;
# CI-only, not part of `make test`). The Go test TestReferenceLogits applies the same rules.
MODELS_DIR ?= ../shared/models
MODELS_PYTHON ?= python3
.PHONY: models-check
models-check:
	GO=$(GO) PYTHON=$(MODELS_PYTHON) sh scripts/models-check.sh $(MODELS_DIR)

# the public models with every layer on ggml-rpc-server (127.0.0.1), checked like models-check
.PHONY: models-check-rpc
models-check-rpc:
	GO=$(GO) PYTHON=$(MODELS_PYTHON) sh scripts/models-check-rpc.sh $(MODELS_DIR)
