package ggml

// Version is the version of this module's Go API and C library.
const Version = "0.2.0"

// GGMLCommit is the commit of upstream ggml whose C API (public headers, names, signatures,
// enum values, struct fields and block layouts) the C library of this module implements.
const GGMLCommit = "b3bcd556"
