package grammar

// Mask sets allowed[t] for every token t that may come next and clears the other entries
// (allowed has one entry per logit; tokens beyond the Vocab are not allowed). It walks the
// Vocab's byte trie with the set of parse stacks: a prefix the grammar rejects prunes every
// token below it, so the cost grows with the number of tokens that are still possible,
// not with the vocabulary. States met along the way and their transitions are cached (see
// setCache), so the walk mostly follows cached transitions. It returns ErrTooManyStacks
// when the grammar is too ambiguous.
func (c *Constraint) Mask(allowed []bool) error {
	clear(allowed)
	if c.finished {
		return nil
	}
	m := c.m
	sc := &m.a.sets
	if sc.size() > maxCachedTrans {
		sc.reset()
	}
	c.allow = allowed
	c.err = nil
	c.frames = append(c.frames[:0], m.stacks...)
	root := sc.intern(c.frames, m.utf)
	c.walk(0, root)
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

// next returns the set that follows set s on byte b, or deadSet.
func (c *Constraint) next(s int32, b byte) int32 {
	m := c.m
	sc := &m.a.sets
	if to, ok := sc.lookup(s, b); ok {
		return to
	}
	out, u, ok := m.stepByte(c.frames[:0], sc.stacks[s], sc.utf[s], b)
	c.frames = out
	to := int32(deadSet)
	switch {
	case m.a.err != nil || len(out) > m.opts.MaxStacks:
		c.err = ErrTooManyStacks
		return deadSet
	case ok && len(out) > 0:
		to = sc.intern(out, u)
	}
	sc.store(s, b, to)
	return to
}

func (c *Constraint) walk(node int32, s int32) {
	v := c.v
	n := v.nodes[node]
	for _, t := range v.toks[n.tokStart:n.tokEnd] {
		if int(t) < len(c.allow) {
			c.allow[t] = true
		}
	}
	for _, e := range v.edges[n.edgeStart:n.edgeEnd] {
		to := c.next(s, e.b)
		if c.err != nil {
			return
		}
		if to != deadSet {
			c.walk(e.child, to)
			if c.err != nil {
				return
			}
		}
	}
}
