package strictjson

import (
	"strings"
	"testing"
)

// Object validates the whole object and reports its members as ranges;
// what is not JSON fails with where and why.
func TestObject(t *testing.T) {
	for doc, want := range map[string]string{
		`{"a":1,"b":{"c":[true,null,"x\u0041"]}}`: "",
		`{"a":1,"a":2}`:                         `at byte 8, member "a" appears twice`,
		`{"a":1,"\u0061":2}`:                    `at byte 8, member "a" appears twice`,
		`{"a":{"b":1,"b":2}}`:                   `at byte 13, member "b" appears twice`,
		`{"a":`:                                 "it ends early, expected a value",
		`{"a":01}`:                              `at byte 7, expected ',' or '}'`,
		`{"a":"` + "\x01" + `"}`:                "at byte 7, a control character must be escaped inside a string",
		`{"a":` + strings.Repeat("[", 70) + `}`: "nesting is deeper than 64 levels",
	} {
		p := Parser{B: []byte(doc)}
		var names []string
		err := p.Object(1, func(key, value Span) { names = append(names, key.Decode(p.B)+"="+string(p.B[value.Start:value.End])) })
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", doc, err)
		case want == "" && (len(names) != 2 || names[0] != "a=1"):
			t.Errorf("%s: members %q", doc, names)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v; want %q", doc, err, want)
		}
	}
}
