# Constrained output (grammar/, sampling/ constraint) and chat templates (chat/).
# Include from the Makefile with: include mk/gram.mk

.PHONY: test-gram fuzz-gram bench-gram

# Unit, property and example tests; no cgo needed.
test-gram:
	CGO_ENABLED=0 $(GO) test -count=1 ./grammar/ ./chat/ ./sampling/

# Short fuzzing of the GBNF parser/matcher and of chat-template compile+render.
fuzz-gram:
	GO=$(GO) bash scripts/fuzz.sh ./grammar/ FuzzParse 20s -parallel 1
	GO=$(GO) bash scripts/fuzz.sh ./chat/ FuzzTemplate 20s -parallel 1

# Per-token grammar overhead over the 32,000-token LLaMA vocabulary (shared model).
bench-gram:
	$(GO) test ./grammar/ -run '^$$' -bench . -benchtime 2s
	$(GO) test ./sampling/ -run '^$$' -bench GrammarOverhead32k -benchtime 1s
