package server

import (
	_ "embed"
	"net/http"
)

// chatPage is the chat page served at /: one HTML file with its script, no build step.
//
//go:embed page/index.html
var chatPage []byte

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(chatPage)
}
