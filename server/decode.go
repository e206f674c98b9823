package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// bodyReadTimeout bounds the time to receive a request body.
const bodyReadTimeout = 30 * time.Second

// readJSON reads the body of r (at most limit bytes) into v. Errors are 400s (413 for a body
// over the limit) that say what is wrong: not JSON, invalid UTF-8, a field of the wrong type.
// Unknown fields are ignored.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) *APIError {
	// a client that trickles its body must not hold a handler forever
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return &APIError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error",
				Message: fmt.Sprintf("the request body is larger than the server's limit of %d bytes", limit)}
		}
		return badRequest("", "reading the request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("", "the request body is empty: send a JSON object")
	}
	if !utf8.Valid(body) {
		i := firstInvalidUTF8(body)
		return badRequest("", "the request body is not valid UTF-8 (first bad byte at offset %d)", i)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return jsonError(err)
	}
	return nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// jsonError turns a decoding error into a 400 naming the field.
func jsonError(err error) *APIError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return badRequest("", "the request body is not valid JSON: %v (at offset %d)", syn, syn.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest("", "the request body must be a JSON object, not %s", typ.Value)
		}
		field := strings.TrimPrefix(typ.Field, "samplingFields.")
		return badRequest(field, "invalid type for '%s': expected %s, got %s", field, jsonTypeName(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("", "the request body is not valid JSON: it ends early")
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return badRequest("", "invalid request: %s", msg)
}

func jsonTypeName(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return kind
}
