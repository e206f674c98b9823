# The OpenAI-compatible server (server/, cmd/ggml-server).
# Include from the Makefile with: include mk/server.mk

.PHONY: fuzz-server test-server test-server-race test-server-clients test-server-openai test-server-page

# Go tests: bad input, streaming format, queue, disconnect, timeout, drain (fake backend, no
# cgo needed) and, with cgo, the load test (64 streaming clients against -np 8). No Node.
test-server:
	CGO_ENABLED=0 $(GO) test -count=1 ./server/ ./cmd/ggml-server/
	$(GO) test -count=1 -v -run 'TestLoad64Clients' ./server/
	$(GO) test -count=1 ./server/

test-server-race:
	$(GO) test -race -count=1 ./server/

# Real clients: the official openai npm package and the chat page in headless Chromium
# (playwright-core), then SIGTERM. npm packages go to a temporary folder; Debian's chromium
# comes from scripts/ci-install.sh chromium. Needs Node, npm and the npm registry.
test-server-clients:
	bash scripts/server/clients-test.sh all

test-server-openai:
	bash scripts/server/clients-test.sh openai

test-server-page:
	bash scripts/server/clients-test.sh page

# Short fuzzing of the request decoding and validation of every POST endpoint, and of the
# tool-call parser.
fuzz-server:
	GO=$(GO) bash scripts/fuzz.sh ./server/ FuzzRequestBodies 20s -parallel 1
	GO=$(GO) bash scripts/fuzz.sh ./chat/ FuzzParseToolCalls 20s -parallel 1
