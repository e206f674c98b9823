package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jsonMember is one key of a JSON object that keeps its keys in document order (JSON
// Schema properties are generated in the order the schema lists them).
type jsonMember struct {
	key string
	val any
}

// jsonObject is a decoded JSON object in document order. Values are jsonObject, []any,
// string, json.Number, bool or nil.
type jsonObject []jsonMember

func (o jsonObject) get(key string) (any, bool) {
	for _, m := range o {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// decodeOrdered decodes one JSON value keeping object key order.
func decodeOrdered(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, depth int) (any, error) {
	if depth > 512 {
		return nil, errors.New("JSON nested deeper than 512 levels")
	}
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := jsonObject{}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				obj = append(obj, jsonMember{k.(string), v})
			}
			_, err := d.Token()
			return obj, err
		case '[':
			arr := []any{}
			for d.More() {
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := d.Token()
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return t, nil
}

// appendJSON writes v as compact JSON (object keys in their order).
func appendJSON(dst []byte, v any) []byte {
	switch v := v.(type) {
	case jsonObject:
		dst = append(dst, '{')
		for i, m := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, m.key)
			dst = append(dst, ':')
			dst = appendJSON(dst, m.val)
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, x := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, x)
		}
		return append(dst, ']')
	case string:
		return appendString(dst, v)
	case json.Number:
		return append(dst, v...)
	case bool:
		return strconv.AppendBool(dst, v)
	case nil:
		return append(dst, "null"...)
	}
	panic(fmt.Sprintf("grammar: unexpected JSON value %T", v))
}

// appendString writes s as a JSON string the way encoding/json does, without HTML escaping.
func appendString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	return append(dst, bytes.TrimRight(buf.Bytes(), "\n")...)
}
