package grammar_test

import (
	"fmt"
	"log"

	"github.com/ggml-go/ggml/grammar"
)

func Example() {
	g, err := grammar.Parse(`
# a comma-separated list of small integers
root ::= item ( ", " item )*
item ::= [0-9] | [1-9] [0-9]
`)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range []string{"1, 22, 3", "1,2", "100"} {
		fmt.Printf("%q %v\n", s, g.Match(s))
	}
	// Output:
	// "1, 22, 3" true
	// "1,2" false
	// "100" false
}

// Which tokens of a vocabulary may come next.
func ExampleConstraint() {
	pieces := []string{"</s>", "{", "}", `"a"`, ":", "1", " ", "hello", "{}"}
	vocab, err := grammar.NewVocab(len(pieces), func(id int32) []byte {
		if id == 0 {
			return nil // a control token has no text
		}
		return []byte(pieces[id])
	}, 0)
	if err != nil {
		log.Fatal(err)
	}
	c, err := grammar.NewConstraint(grammar.JSONObject(), vocab, grammar.Options{})
	if err != nil {
		log.Fatal(err)
	}
	allowed := make([]bool, len(pieces))
	for _, tok := range []int32{1, 3, 4, 5, 2} {
		if err := c.Mask(allowed); err != nil {
			log.Fatal(err)
		}
		var next []string
		for id, ok := range allowed {
			if ok {
				next = append(next, pieces[id])
			}
		}
		fmt.Printf("%q may come; take %q\n", next, pieces[tok])
		if err := c.Accept(tok); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("complete:", c.Complete(), "end allowed:", c.Allows(0))
	// Output:
	// ["{" " " "{}"] may come; take "{"
	// ["}" "\"a\"" " "] may come; take "\"a\""
	// [":" " "] may come; take ":"
	// ["{" "\"a\"" "1" " " "{}"] may come; take "1"
	// ["}" "1" " "] may come; take "}"
	// complete: true end allowed: true
}

func ExampleJSONSchemaGBNF() {
	text, err := grammar.JSONSchemaGBNF([]byte(`{
		"type": "object",
		"properties": {"name": {"type": "string"}, "ok": {"type": "boolean"}},
		"required": ["name"]
	}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(text)
	g := grammar.MustParse(text)
	fmt.Println(g.Match(`{"name": "x", "ok": true}`), g.Match(`{"ok": true}`))
	// Output:
	// root ::= ws root-value ws
	// ws ::= ( " " | "\n" [ \t]{0,20} )?
	// string ::= "\"" char* "\""
	// char ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
	// root-value-name-kv ::= "\"name\"" ws ":" ws string
	// boolean ::= "true" | "false"
	// root-value-ok-kv ::= "\"ok\"" ws ":" ws boolean
	// root-value ::= "{" ws root-value-name-kv ( ws "," ws root-value-ok-kv )? ws "}"
	// true false
}
