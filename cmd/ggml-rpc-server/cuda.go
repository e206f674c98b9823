//go:build cuda

package main

// Builds with -tags cuda link the CUDA backend: importing the package registers every CUDA
// device in the backend registry as "CUDA<i>", for ggml-rpc-server -backend CUDA0.
import _ "github.com/ggml-go/ggml/cuda"
