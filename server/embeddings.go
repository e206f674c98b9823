package server

import (
	"context"
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"unicode/utf8"
)

// maxEmbeddingInputs bounds the inputs of one embeddings request.
const maxEmbeddingInputs = 256

// embeddings serves POST /v1/embeddings.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var req EmbeddingRequest
	if e := readJSON(w, r, s.cfg.MaxBodyBytes, &req); e != nil {
		writeError(w, e)
		return
	}
	switch {
	case len(req.Input) == 0:
		writeError(w, badRequest("input", "input is missing or empty: send a string or an array of strings"))
		return
	case len(req.Input) > maxEmbeddingInputs:
		writeError(w, badRequest("input", "%d inputs: at most %d per request", len(req.Input), maxEmbeddingInputs))
		return
	case req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64":
		writeError(w, badRequest("encoding_format", "encoding_format %q: use \"float\" or \"base64\"", req.EncodingFormat))
		return
	}
	toks := make([][]int32, len(req.Input))
	total := 0
	for i, in := range req.Input {
		if in == "" || !utf8.ValidString(in) {
			writeError(w, badRequest("input", "input[%d] is empty or not valid UTF-8", i))
			return
		}
		toks[i] = s.b.CompletionPrompt(in)
		if len(toks[i]) > s.info.ContextLength {
			writeError(w, badRequest("input", "input[%d] has %d tokens; a slot's context holds %d: shorten it or start the server with a larger -c", i, len(toks[i]), s.info.ContextLength).withCode("context_length_exceeded"))
			return
		}
		total += len(toks[i])
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	release, ok := s.admit(w, ctx)
	if !ok {
		return
	}
	defer release()
	resp := embeddingResponse{Object: "list", Model: s.info.ID}
	for i, t := range toks {
		v, err := s.b.Embed(ctx, t)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				s.ctxError(w, ctx)
			case errors.Is(err, ErrNoEmbeddings):
				writeError(w, badRequest("model", "%v", err))
			default:
				writeError(w, serverError("embedding failed: %v", err))
			}
			return
		}
		var emb any = v
		if req.EncodingFormat == "base64" {
			b := make([]byte, 4*len(v))
			for j, x := range v {
				u := math.Float32bits(x)
				b[4*j], b[4*j+1], b[4*j+2], b[4*j+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
			}
			emb = base64.StdEncoding.EncodeToString(b)
		}
		resp.Data = append(resp.Data, embeddingData{Object: "embedding", Index: i, Embedding: emb})
	}
	s.met.promptTokens.Add(float64(total))
	resp.Usage.PromptTokens, resp.Usage.TotalTokens = total, total
	writeJSON(w, resp)
}
