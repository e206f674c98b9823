package chat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestHostileTemplatesRejected(t *testing.T) {
	for _, src := range []string{
		`{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}`,
		`{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}`,
		`{% macro a() %}x{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{% set a = b %}{{ b() }}`,
		`{% macro b(a) %}{{ a(a) }}{% endmacro %}{{ b(b) }}`,
		`{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{{ m() }}{% endcall %}`,
		`{% for x in ["a"] recursive %}{{ loop(x) }}{% endfor %}`,
		`{% macro f() %}` + strings.Repeat("x", MaxSourceBytes) + `{% endmacro %}`,
		`{{ unclosed`,
	} {
		if _, err := New(src, "", "", Limits{}); !errors.Is(err, ErrTemplate) {
			t.Errorf("%.60q: got %v, want an ErrTemplate", src, err)
		}
	}
	// macros that call only earlier macros and filters are fine
	ok := `{% macro a(x) %}[{{ x | trim }}]{% endmacro %}{% macro b(y) %}{{ a(y) }}{{ y is string }}{% endmacro %}{{ b(" z ") }}`
	tmpl, err := New(ok, "", "", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := tmpl.Render(context.Background(), Request{}); err != nil || out != "[z]True" {
		t.Errorf("got %q, %v", out, err)
	}
}

func TestRenderLimits(t *testing.T) {
	for _, tc := range []struct {
		src      string
		limits   Limits
		contains string
	}{
		{`{% for i in range(1000000000) %}x{% endfor %}`, Limits{}, "limit"},
		{`{% for i in range(2000) %}{% for j in range(2000) %}{% endfor %}{% endfor %}`, Limits{MaxRangeAll: 100000, Timeout: time.Minute}, "limit"},
		{`{% for i in range(5000) %}xx{% endfor %}`, Limits{MaxOutput: 1000, Timeout: time.Minute}, "above the limit"},
		{`{% for i in range(1000) %}{% for j in range(1000) %}{% set x = i * j %}{% endfor %}{% endfor %}`, Limits{Timeout: time.Millisecond}, "did not finish"},
		{`{{ raise_exception("no tools here") }}`, Limits{}, "no tools here"},
	} {
		tmpl, err := New(tc.src, "", "", tc.limits)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tmpl.Render(context.Background(), Request{})
		if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%.60q: got %v, want an error containing %q", tc.src, err, tc.contains)
		}
	}
	// a cancelled context stops waiting at once
	tmpl, _ := New(`{{ 1 }}`, "", "", Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tmpl.Render(ctx, Request{}); err == nil {
		// the render may win the race; either outcome is fine, but it must not hang
		t.Log("render finished before the cancelled context was seen")
	}
}

// FuzzTemplate: compiling and rendering any text never panics or crashes.
func FuzzTemplate(f *testing.F) {
	f.Add(ChatML)
	f.Add(`{% macro a(x) %}{{ x }}{% endmacro %}{{ a(messages[0].content) }}`)
	f.Add(`{% for m in messages %}{{ m.role | upper }}{% if loop.last %}!{% endif %}{% endfor %}{{ tools | tojson(indent=2) }}`)
	f.Add(`{% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}`)
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := New(src, "<s>", "</s>", Limits{Timeout: 200 * time.Millisecond, MaxRangeAll: 10000, MaxRange: 1000})
		if err != nil {
			return
		}
		_, _ = tmpl.Render(context.Background(), Request{Messages: plainChat, AddGenerationPrompt: true})
	})
}
