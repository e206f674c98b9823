package server

import (
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// models serves GET /v1/models.
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"object": "list", "data": []map[string]any{s.modelObject()}})
}

// modelObject is the served model in OpenAI's model object shape (with llama.cpp's meta).
func (s *Server) modelObject() map[string]any {
	return map[string]any{
		"id": s.info.ID, "object": "model", "created": s.info.Created, "owned_by": "ggml-go",
		"meta": map[string]any{"n_ctx_slot": s.info.ContextLength, "slots": s.info.Slots, "n_embd": s.info.EmbeddingLength},
	}
}

// model serves GET /v1/models/{model}: the served model, or a 404 model_not_found that names it.
func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	if id := r.PathValue("model"); id != s.info.ID {
		writeError(w, (&APIError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: strp("model"),
			Message: fmt.Sprintf("the model %q does not exist here: this server serves %q (requests may name any model; it answers with that one)", id, s.info.ID)}).withCode("model_not_found"))
		return
	}
	writeJSON(w, s.modelObject())
}

// storedResponse answers the Responses API's calls on a stored response (retrieve, delete,
// cancel, input items): this server stores none.
func (s *Server) storedResponse(w http.ResponseWriter, r *http.Request) {
	writeError(w, &APIError{Status: http.StatusNotFound, Type: "invalid_request_error",
		Message: fmt.Sprintf("no response %q: this server stores no responses (each POST /v1/responses is answered and forgotten)", r.PathValue("id"))})
}

// health serves GET /health: 200 {"status":"ok"}, or 503 while draining.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"status":"draining"}` + "\n"))
		return
	}
	writeJSON(w, map[string]any{"status": "ok", "slots_idle": s.info.Slots - int(s.lim.active.Load()), "slots_processing": s.lim.active.Load(), "queued": s.lim.waiting.Load()})
}

// tokenizeRequest is the body of POST /tokenize (llama.cpp's fields).
type tokenizeRequest struct {
	Content    *string `json:"content"`
	AddSpecial bool    `json:"add_special"`
	WithPieces bool    `json:"with_pieces"`
}

type tokenPiece struct {
	ID    int32 `json:"id"`
	Piece any   `json:"piece"` // a string, or the bytes when not valid UTF-8
}

// tokenize serves POST /tokenize.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	var req tokenizeRequest
	if e := readJSON(w, r, s.cfg.MaxBodyBytes, &req); e != nil {
		writeError(w, e)
		return
	}
	if req.Content == nil {
		writeError(w, badRequest("content", "content is missing: send {\"content\": \"text\"}"))
		return
	}
	toks := s.b.Tokenize(*req.Content, req.AddSpecial, true)
	if !req.WithPieces {
		if toks == nil {
			toks = []int32{}
		}
		writeJSON(w, map[string]any{"tokens": toks})
		return
	}
	out := make([]tokenPiece, len(toks))
	for i, t := range toks {
		p, _ := s.b.Piece(t)
		var piece any = string(p)
		if !utf8.Valid(p) {
			ints := make([]int, len(p))
			for j, c := range p {
				ints[j] = int(c)
			}
			piece = ints
		}
		out[i] = tokenPiece{ID: t, Piece: piece}
	}
	writeJSON(w, map[string]any{"tokens": out})
}

// detokenize serves POST /detokenize.
func (s *Server) detokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tokens []int32 `json:"tokens"`
	}
	if e := readJSON(w, r, s.cfg.MaxBodyBytes, &req); e != nil {
		writeError(w, e)
		return
	}
	b, err := s.b.Detokenize(req.Tokens)
	if err != nil {
		writeError(w, badRequest("tokens", "%v", err))
		return
	}
	writeJSON(w, map[string]any{"content": strings.ToValidUTF8(string(b), "\uFFFD")})
}
