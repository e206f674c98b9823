package grammar

// Mask sets allowed[t] for every token t that may come next and clears the other entries
// (allowed has one entry per logit; tokens beyond the Vocab are not allowed). It walks the
// Vocab's byte trie with the set of parse stacks: a prefix the grammar rejects prunes every
// token below it, so the cost grows with the number of tokens that are still possible,
// not with the vocabulary. It returns ErrTooManyStacks when the grammar is too ambiguous.
func (c *Constraint) Mask(allowed []bool) error {
	clear(allowed)
	if c.finished {
		return nil
	}
	m := c.m
	c.allow = allowed
	c.err = nil
	c.frames = append(c.frames[:0], m.stacks...)
	c.walk(0, 0, len(c.frames), m.utf)
	c.allow = nil
	if c.err != nil {
		return c.err
	}
	if m.Complete() {
		for t, e := range c.v.eog {
			if e && t < len(allowed) {
				allowed[t] = true
			}
		}
	}
	return nil
}

func (c *Constraint) walk(node int32, lo, hi int, u utf8State) {
	v := c.v
	n := v.nodes[node]
	for _, t := range v.toks[n.tokStart:n.tokEnd] {
		if int(t) < len(c.allow) {
			c.allow[t] = true
		}
	}
	m := c.m
	max := m.opts.MaxStacks
	for _, e := range v.edges[n.edgeStart:n.edgeEnd] {
		start := len(c.frames)
		var ok bool
		var u2 utf8State
		c.frames, u2, ok = m.stepByte(c.frames, c.frames[lo:hi], u, e.b)
		if ok && len(c.frames) > start {
			if len(c.frames)-start > max || m.a.err != nil {
				c.err = ErrTooManyStacks
				c.frames = c.frames[:start]
				return
			}
			c.walk(e.child, start, len(c.frames), u2)
			if c.err != nil {
				return
			}
		}
		c.frames = c.frames[:start]
	}
}
