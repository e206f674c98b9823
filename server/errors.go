package server

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// APIError is an error answered in OpenAI's format:
// {"error": {"message", "type", "param", "code"}} with an HTTP status.
type APIError struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// Error returns the message.
func (e *APIError) Error() string { return e.Message }

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// badRequest is a 400 about param (may be empty).
func badRequest(param, format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: strp(param), Message: fmt.Sprintf(format, args...)}
}

// withCode sets the error code.
func (e *APIError) withCode(code string) *APIError { e.Code = strp(code); return e }

func serverError(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusInternalServerError, Type: "server_error", Message: fmt.Sprintf(format, args...)}
}

// writeError writes e as JSON with its status.
func writeError(w http.ResponseWriter, e *APIError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	json.NewEncoder(w).Encode(struct {
		Error *APIError `json:"error"`
	}{e})
}

// writeJSON writes v with status 200.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
