package grammar

import "strings"

// object converts an object schema: required members in order, then optional ones, then
// additional members if allowed, with commas only between members that are present.
func (c *schemaConv) object(s jsonObject, hint, path string) (string, error) {
	propsV, hasProps := s.get("properties")
	props, _ := propsV.(jsonObject)
	if hasProps && props == nil {
		return "", schemaErr(path, "properties must be an object")
	}
	required := map[string]bool{}
	if r, ok := s.get("required"); ok {
		list, ok := r.([]any)
		if !ok {
			return "", schemaErr(path, "required must be an array of property names")
		}
		for _, x := range list {
			n, ok := x.(string)
			if !ok {
				return "", schemaErr(path, "required must be an array of property names")
			}
			if _, ok := props.get(n); !ok {
				return "", schemaErr(path, "required property %q is not in properties: add it there", n)
			}
			required[n] = true
		}
	}
	// additional members: false by default when properties are given
	addl := ""
	addlV, hasAddl := s.get("additionalProperties")
	switch {
	case !hasAddl && !hasProps, addlV == true:
		addl = c.use("value")
	case !hasAddl, addlV == false:
	default:
		var err error
		if addl, err = c.convert(addlV, hint+"-additional", path+"/additionalProperties"); err != nil {
			return "", err
		}
	}
	c.use("string")
	c.use("ws")
	var req, opt []string
	for _, m := range props {
		e, err := c.convert(m.val, hint+"-"+m.key, path+"/properties/"+m.key)
		if err != nil {
			return "", err
		}
		kv := c.rule(hint+"-"+m.key+"-kv", literal(string(appendString(nil, m.key)))+` ws ":" ws `+e)
		if required[m.key] {
			req = append(req, kv)
		} else {
			opt = append(opt, kv)
		}
	}
	extra := ""
	if addl != "" {
		extra = c.rule(hint+"-extra-kv", `string ws ":" ws `+addl)
		opt = append(opt, extra) // may repeat; handled below
	}
	// body: required members in order, each optional one present or not, then any number
	// of additional members; commas between present members only.
	var sb strings.Builder
	sb.WriteString(`"{" ws `)
	if len(req) > 0 {
		for i, kv := range req {
			if i > 0 {
				sb.WriteString(`ws "," ws `)
			}
			sb.WriteString(kv + " ")
		}
		for _, kv := range opt {
			if kv == extra {
				sb.WriteString(`( ws "," ws ` + kv + ` )* `)
			} else {
				sb.WriteString(`( ws "," ws ` + kv + ` )? `)
			}
		}
		sb.WriteString(`ws "}"`)
		return c.rule(hint, sb.String()), nil
	}
	if len(opt) == 0 {
		return c.rule(hint, `"{" ws "}"`), nil
	}
	// no required member: the first present one has no comma before it.
	// tail_i ::= ( ws "," ws opt_i )? tail_{i+1} (the last: opt repeated for extras)
	tails := make([]string, len(opt)+1)
	tails[len(opt)] = ""
	for i := len(opt) - 1; i >= 0; i-- {
		rep := "?"
		if opt[i] == extra {
			rep = "*"
		}
		body := `( ws "," ws ` + opt[i] + ` )` + rep
		if tails[i+1] != "" {
			body += " " + tails[i+1]
		}
		tails[i] = c.rule(hint+"-tail", body)
	}
	var alts []string
	for i, kv := range opt {
		a := kv
		if opt[i] == extra {
			a += " " + tails[i] // more extras may follow
		} else if tails[i+1] != "" {
			a += " " + tails[i+1]
		}
		alts = append(alts, a)
	}
	members := c.rule(hint+"-members", strings.Join(alts, " | "))
	return c.rule(hint, `"{" ws ( `+members+` ws )? "}"`), nil
}
