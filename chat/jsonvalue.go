package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/ardanlabs/jinja"
)

// jsonValue decodes JSON into Jinja values, keeping the order of object keys (templates
// print tools with tojson, and the model saw them in the order written).
func jsonValue(data []byte) (jinja.Value, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeJinja(d, 0)
	if err != nil {
		return jinja.Value{}, err
	}
	if _, err := d.Token(); err != io.EOF {
		return jinja.Value{}, errors.New("text after the JSON value")
	}
	return v, nil
}

func decodeJinja(d *json.Decoder, depth int) (jinja.Value, error) {
	if depth > 256 {
		return jinja.Value{}, errors.New("JSON nested deeper than 256 levels")
	}
	t, err := d.Token()
	if err != nil {
		return jinja.Value{}, err
	}
	switch t := t.(type) {
	case json.Delim:
		if t == '{' {
			obj := jinja.NewDict()
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return jinja.Value{}, err
				}
				v, err := decodeJinja(d, depth+1)
				if err != nil {
					return jinja.Value{}, err
				}
				obj.AsDict().Set(k.(string), v)
			}
			_, err := d.Token()
			return obj, err
		}
		var items []jinja.Value
		for d.More() {
			v, err := decodeJinja(d, depth+1)
			if err != nil {
				return jinja.Value{}, err
			}
			items = append(items, v)
		}
		_, err := d.Token()
		return jinja.NewList(items), err
	case string:
		return jinja.NewString(t), nil
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return jinja.NewInt(i), nil
		}
		f, err := t.Float64()
		return jinja.NewFloat(f), err
	case bool:
		return jinja.NewBool(t), nil
	}
	return jinja.None(), nil
}
