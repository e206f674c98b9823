package grammar

// JSONGrammar is GBNF for any JSON value (RFC 8259), with the whitespace policy of this
// package: between tokens nothing, one space, or one newline and at most 20 spaces or tabs
// of indentation (so a model can pretty-print but cannot loop or dawdle on whitespace).
// Numbers allow at most 16 integer digits.
const JSONGrammar = `# any JSON value
root   ::= ws value ws
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( member ( ws "," ws member )* ws )? "}"
member ::= string ws ":" ws value
array  ::= "[" ws ( value ( ws "," ws value )* ws )? "]"
string ::= "\"" char* "\""
char   ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
number ::= "-"? int frac? exp?
int    ::= "0" | [1-9] [0-9]{0,15}
frac   ::= "." [0-9]+
exp    ::= [eE] [-+]? [0-9]+
ws     ::= ( " " | "\n" [ \t]{0,20} )?
`

// JSONObjectGrammar is GBNF for a JSON object (JSON mode): JSONGrammar with an object at
// the top.
const JSONObjectGrammar = `# a JSON object
root   ::= ws object ws
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( member ( ws "," ws member )* ws )? "}"
member ::= string ws ":" ws value
array  ::= "[" ws ( value ( ws "," ws value )* ws )? "]"
string ::= "\"" char* "\""
char   ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
number ::= "-"? int frac? exp?
int    ::= "0" | [1-9] [0-9]{0,15}
frac   ::= "." [0-9]+
exp    ::= [eE] [-+]? [0-9]+
ws     ::= ( " " | "\n" [ \t]{0,20} )?
`

var (
	jsonValue = MustParse(JSONGrammar)
	jsonObj   = MustParse(JSONObjectGrammar)
)

// JSON returns the compiled JSONGrammar.
func JSON() *Grammar { return jsonValue }

// JSONObject returns the compiled JSONObjectGrammar (JSON mode).
func JSONObject() *Grammar { return jsonObj }
