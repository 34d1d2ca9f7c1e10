package inventory

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// ok marks a table row whose body is accepted.
const ok Code = ""

type bodyCase struct {
	name string
	body string
	code Code // ok when accepted
	qty  int  // the quantity an accepted body spells
}

// checkBody runs parseUpdate on one row and also holds the fuzz oracle
// (fuzz_test.go) to the same row, so that the oracle is tested too.
func checkBody(t *testing.T, c bodyCase) {
	t.Helper()
	q, err := parseUpdate([]byte(c.body))
	switch {
	case c.code == ok && err != nil:
		t.Errorf("parseUpdate(%.80q) = %v; want quantity %d", c.body, err, c.qty)
	case c.code == ok && q != c.qty:
		t.Errorf("parseUpdate(%.80q) = %d; want %d", c.body, q, c.qty)
	case c.code != ok && err == nil:
		t.Errorf("parseUpdate(%.80q) = %d, nil; want code %s", c.body, q, c.code)
	case c.code != ok && err.code != c.code:
		t.Errorf("parseUpdate(%.80q): code %s (%s); want %s", c.body, err.code, err.message, c.code)
	case c.code != ok && err.Status() != 400:
		t.Errorf("parseUpdate(%.80q): status %d; want 400", c.body, err.Status())
	}
	if err != nil && q != 0 {
		t.Errorf("parseUpdate(%.80q) returned quantity %d with an error", c.body, q)
	}
	if err != nil && (!utf8.ValidString(err.message) || len(err.message) > 300) {
		t.Errorf("parseUpdate(%.80q): message is not short valid UTF-8: %q", c.body, err.message)
	}
	oq, ocode, decided := oracleUpdate([]byte(c.body))
	if !decided {
		t.Errorf("oracle cannot decide %.80q", c.body)
	} else if ocode != c.code || (c.code == ok && oq != int64(c.qty)) {
		t.Errorf("oracle disagrees with the table on %.80q: oracle %q %d, table %q %d", c.body, ocode, oq, c.code, c.qty)
	}
}

func runBodyCases(t *testing.T, cases []bodyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkBody(t, c) })
	}
}

func TestParseUpdateCheckOrder(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{"valid", `{"quantity":5}`, ok, 5},
		{"duplicate quantity", `{"quantity":5,"quantity":6}`, CodeInvalidJSON, 0},
		{"duplicate beats unknown", `{"status":"a","quantity":5,"status":"b"}`, CodeInvalidJSON, 0},
		{"nested duplicate beats unknown", `{"a":{"b":1,"b":2},"quantity":5}`, CodeInvalidJSON, 0},
		{"trailing data beats unknown", `{"status":1,"quantity":5} x`, CodeInvalidJSON, 0},
		{"syntax error after unknown", `{"status":1,"quantity":[1,2`, CodeInvalidJSON, 0},
		{"invalid UTF-8 beats unknown", "{\"status\":\"\xff\"}", CodeInvalidJSON, 0},
		{"too deep beats unknown", `{"x":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, CodeInvalidJSON, 0},
		{"unknown beats missing", `{"status":"sold"}`, CodeUnknownField, 0},
		{"unknown beats invalid field", `{"status":"sold","quantity":"x"}`, CodeUnknownField, 0},
		{"unknown after invalid field", `{"quantity":1.5,"status":"sold"}`, CodeUnknownField, 0},
		{"unknown beats out of range", `{"quantity":-1,"x":null}`, CodeUnknownField, 0},
		{"missing", `{}`, CodeMissingField, 0},
		{"missing with spaces", " { } ", CodeMissingField, 0},
		{"invalid field", `{"quantity":-1}`, CodeInvalidField, 0},
	})
}

func TestParseUpdateDocument(t *testing.T) {
	runBodyCases(t, []bodyCase{
		{"empty", ``, CodeInvalidJSON, 0},
		{"whitespace only", " \t\r\n", CodeInvalidJSON, 0},
		{"surrounding whitespace", " \t\r\n{ \"quantity\" :\t7 }\r\n ", ok, 7},
		{"form feed is not JSON whitespace", "\f{\"quantity\":7}", CodeInvalidJSON, 0},
		{"NBSP is not JSON whitespace", "\u00a0{\"quantity\":7}", CodeInvalidJSON, 0},
		{"byte order mark", "\ufeff{\"quantity\":7}", CodeInvalidJSON, 0},
		{"array", `[{"quantity":5}]`, CodeInvalidJSON, 0},
		{"string", `"quantity"`, CodeInvalidJSON, 0},
		{"number", `5`, CodeInvalidJSON, 0},
		{"true", `true`, CodeInvalidJSON, 0},
		{"null", `null`, CodeInvalidJSON, 0},
		{"two objects", `{"quantity":5}{"quantity":5}`, CodeInvalidJSON, 0},
		{"trailing comma", `{"quantity":5},`, CodeInvalidJSON, 0},
		{"trailing comma inside", `{"quantity":5,}`, CodeInvalidJSON, 0},
		{"trailing NUL", "{\"quantity\":5}\x00", CodeInvalidJSON, 0},
		{"unclosed", `{"quantity":5`, CodeInvalidJSON, 0},
		{"single quotes", `{'quantity':5}`, CodeInvalidJSON, 0},
		{"bare name", `{quantity:5}`, CodeInvalidJSON, 0},
		{"missing colon", `{"quantity" 5}`, CodeInvalidJSON, 0},
		{"comment", `{"quantity":5 /* c */}`, CodeInvalidJSON, 0},
		{"literal prefix", `{"quantity":tru}`, CodeInvalidJSON, 0},
		{"capital literal", `{"quantity":True}`, CodeInvalidJSON, 0},
		{"bad escape", `{"quantity":5,"a":"\x"}`, CodeInvalidJSON, 0},
		{"short unicode escape", `{"quantity":5,"a":"\u12"}`, CodeInvalidJSON, 0},
		{"unterminated string", `{"quantity":5,"a":"abc}`, CodeInvalidJSON, 0},
		{"escape at the end", `{"quantity":5,"a":"\`, CodeInvalidJSON, 0},
		// Control characters must be escaped inside strings; DEL need not be.
		{"raw control char", "{\"quantity\":5,\"a\":\"\x01\"}", CodeInvalidJSON, 0},
		{"raw tab in string", "{\"quantity\":5,\"a\":\"\t\"}", CodeInvalidJSON, 0},
		{"raw newline in name", "{\"quan\ntity\":5}", CodeInvalidJSON, 0},
		{"raw DEL", "{\"quantity\":5,\"a\":\"\x7f\"}", CodeUnknownField, 0},
		{"escaped control char", `{"quantity":5,"a":"\u0001\t"}`, CodeUnknownField, 0},
		// Invalid UTF-8, anywhere.
		{"invalid byte in value", "{\"quantity\":5,\"a\":\"\xff\"}", CodeInvalidJSON, 0},
		{"invalid byte in name", "{\"quantity\":5,\"\xfe\":1}", CodeInvalidJSON, 0},
		{"invalid byte after object", "{\"quantity\":5}\xff", CodeInvalidJSON, 0},
		{"overlong slash", "{\"quantity\":5,\"\xc0\xaf\":1}", CodeInvalidJSON, 0},
		{"UTF-8 encoded surrogate", "{\"quantity\":5,\"\xed\xa0\x80\":1}", CodeInvalidJSON, 0},
		{"truncated rune", "{\"quantity\":5,\"\xe2\x82\":1}", CodeInvalidJSON, 0},
		{"valid non-ASCII name", `{"quantité":5}`, CodeUnknownField, 0},
		{"valid non-ASCII value", `{"quantity":5,"a":"😀"}`, CodeUnknownField, 0},
	})
}

func TestParseUpdateMemberNames(t *testing.T) {
	many := func(extra string) string {
		var b strings.Builder
		b.WriteString(`{"quantity":1,"x":{`)
		for i := range 20 {
			b.WriteString(`"k` + strconv.Itoa(i) + `":0,`)
		}
		b.WriteString(extra + `}}`)
		return b.String()
	}
	runBodyCases(t, []bodyCase{
		{"escaped quantity", `{"quantit\u0079":5}`, ok, 5},
		{"escaped first letter", `{"\u0071uantity":6}`, ok, 6},
		{"every letter escaped", `{"\u0071\u0075\u0061\u006e\u0074\u0069\u0074\u0079":8}`, ok, 8},
		{"upper-case hex escape", `{"quantit\u0059":5}`, CodeUnknownField, 0},
		{"duplicate after unescaping", `{"quantity":5,"quantit\u0079":6}`, CodeInvalidJSON, 0},
		{"duplicate both escaped", `{"quantit\u0079":5,"\u0071uantity":6}`, CodeInvalidJSON, 0},
		{"duplicate via solidus escape", `{"quantity":1,"a\/b":1,"a/b":2}`, CodeInvalidJSON, 0},
		{"duplicate empty names", `{"quantity":1,"":1,"":2}`, CodeInvalidJSON, 0},
		// Lone surrogates decode to U+FFFD (as encoding/json does), so two
		// of them are the same name.
		{"lone surrogates collide", `{"quantity":1,"\ud800":1,"\udc00":2}`, CodeInvalidJSON, 0},
		{"surrogate pair is one rune", `{"quantity":1,"\ud83d\ude00":1,"😀":2}`, CodeInvalidJSON, 0},
		{"case differs", `{"quantity":1,"Quantity":2}`, CodeUnknownField, 0},
		{"Quantity", `{"Quantity":5}`, CodeUnknownField, 0},
		{"QUANTITY", `{"QUANTITY":5}`, CodeUnknownField, 0},
		{"trailing space in name", `{"quantity ":5}`, CodeUnknownField, 0},
		{"NUL in name", `{"quantity\u0000":5}`, CodeUnknownField, 0},
		{"prefix", `{"quant":5}`, CodeUnknownField, 0},
		// Duplicates count in nested objects too, also past the 16 members
		// where the parser switches from a scan to a map.
		{"nested duplicate", `{"quantity":1,"a":[{"x":1},{"x":1,"x":2}]}`, CodeInvalidJSON, 0},
		{"same name in sibling objects", `{"quantity":1,"a":[{"x":1},{"x":2}]}`, CodeUnknownField, 0},
		{"same name at another depth", `{"a":{"a":{"a":1}},"quantity":1}`, CodeUnknownField, 0},
		{"quantity inside quantity", `{"quantity":{"quantity":1}}`, CodeInvalidField, 0},
		{"many members no duplicate", many(`"k20":0`), CodeUnknownField, 0},
		{"many members duplicate", many(`"k3":0`), CodeInvalidJSON, 0},
		{"many members escaped duplicate", many(`"\u006b3":0`), CodeInvalidJSON, 0},
		{"many members duplicate of an escaped one", strings.Replace(many(`"k3":0`), `"k3"`, `"\u006b3"`, 1), CodeInvalidJSON, 0},
	})
}

func TestParseUpdateDepth(t *testing.T) {
	// nest returns a body with n nested containers in all, the top-level
	// object included.
	nestArrays := func(n int) string {
		return `{"quantity":1,"x":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`
	}
	nestObjects := func(n int) string {
		return `{"quantity":1,"x":` + strings.Repeat(`{"a":`, n-2) + `{}` + strings.Repeat(`}`, n-2) + `}`
	}
	runBodyCases(t, []bodyCase{
		{"64 arrays", nestArrays(64), CodeUnknownField, 0},
		{"65 arrays", nestArrays(65), CodeInvalidJSON, 0},
		{"64 objects", nestObjects(64), CodeUnknownField, 0},
		{"65 objects", nestObjects(65), CodeInvalidJSON, 0},
		{"quantity at depth 64", `{"quantity":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`, CodeInvalidField, 0},
		{"quantity at depth 65", `{"quantity":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, CodeInvalidJSON, 0},
		// A hostile depth is rejected without exhausting the stack.
		{"a million brackets", `{"x":` + strings.Repeat("[", 1_000_000), CodeInvalidJSON, 0},
	})
}

func TestParseUpdateQuantity(t *testing.T) {
	q := func(v string) string { return `{"quantity":` + v + `}` }
	runBodyCases(t, []bodyCase{
		{"zero", q("0"), ok, 0},
		{"five", q("5"), ok, 5},
		{"max", q("2147483647"), ok, 2147483647},
		{"max plus one", q("2147483648"), CodeInvalidField, 0},
		{"max with .0", q("2147483647.0"), ok, 2147483647},
		{"max times ten e-1", q("21474836470e-1"), ok, 2147483647},
		{"max plus one times ten e-1", q("21474836480e-1"), CodeInvalidField, 0},
		{"max as 0.x e10", q("0.2147483647e10"), ok, 2147483647},
		{"max plus one as 0.x e10", q("0.2147483648e10"), CodeInvalidField, 0},
		{"max e0", q("2147483647e0"), ok, 2147483647},
		{"max split", q("214748364.7e1"), ok, 2147483647},
		{"max with tiny fraction", q("2147483647.0000001"), CodeInvalidField, 0},
		{"int64 max", q("9223372036854775807"), CodeInvalidField, 0},
		{"uint64 max plus one", q("18446744073709551616"), CodeInvalidField, 0},
		{"ten digits over", q("9999999999"), CodeInvalidField, 0},
		{"eleven digits", q("10000000000"), CodeInvalidField, 0},
		{"5.0", q("5.0"), ok, 5},
		{"5e0", q("5e0"), ok, 5},
		{"5E+0", q("5E+0"), ok, 5},
		{"5e-0", q("5e-0"), ok, 5},
		{"0.5e1", q("0.5e1"), ok, 5},
		{"50e-1", q("50e-1"), ok, 5},
		{"500e-2", q("500.000e-2"), ok, 5},
		{"1e9", q("1e9"), ok, 1000000000},
		{"2e9", q("2E9"), ok, 2000000000},
		{"3e9", q("3e9"), CodeInvalidField, 0},
		{"1e10", q("1e10"), CodeInvalidField, 0},
		{"tiny times big", q("0.000000000000000000001e21"), ok, 1},
		{"5.000000000000000000001", q("5.000000000000000000001"), CodeInvalidField, 0},
		{"5.5", q("5.5"), CodeInvalidField, 0},
		{"0.5", q("0.5"), CodeInvalidField, 0},
		{"55e-1", q("55e-1"), CodeInvalidField, 0},
		{"1e400", q("1e400"), CodeInvalidField, 0},
		{"1e-400", q("1e-400"), CodeInvalidField, 0},
		{"-1e-400", q("-1e-400"), CodeInvalidField, 0},
		{"huge exponent", q("1e99999999999999999999999999"), CodeInvalidField, 0},
		{"huge negative exponent", q("1e-99999999999999999999999999"), CodeInvalidField, 0},
		{"zero with huge exponent", q("0e99999999999999999999999999"), ok, 0},
		{"zero with huge negative exponent", q("0.000e-99999999999999999999999999"), ok, 0},
		{"0e400", q("0e400"), ok, 0},
		{"-0", q("-0"), ok, 0},
		{"-0.0", q("-0.0"), ok, 0},
		{"-0e5", q("-0E5"), ok, 0},
		{"-1", q("-1"), CodeInvalidField, 0},
		{"-5.0", q("-5.0"), CodeInvalidField, 0},
		{"-0.5", q("-0.5"), CodeInvalidField, 0},
		{"-max", q("-2147483647"), CodeInvalidField, 0},
		{"many trailing zeros", q("1" + strings.Repeat("0", 5000) + "e-5000"), ok, 1},
		{"many leading zeros", q("0." + strings.Repeat("0", 5000) + "7e5001"), ok, 7},
		{"many fraction zeros", q("7." + strings.Repeat("0", 5000)), ok, 7},
		{"many fraction zeros then a one", q("7." + strings.Repeat("0", 5000) + "1"), CodeInvalidField, 0},
		{"5000 digits", q(strings.Repeat("9", 5000)), CodeInvalidField, 0},
		// Leading zeros and other non-JSON numbers are invalid JSON.
		{"leading zero", q("05"), CodeInvalidJSON, 0},
		{"negative leading zero", q("-05"), CodeInvalidJSON, 0},
		{"double zero", q("00"), CodeInvalidJSON, 0},
		{"leading zero with fraction", q("01.0"), CodeInvalidJSON, 0},
		{"plus sign", q("+5"), CodeInvalidJSON, 0},
		{"bare minus", q("-"), CodeInvalidJSON, 0},
		{"dot first", q(".5"), CodeInvalidJSON, 0},
		{"dot last", q("5."), CodeInvalidJSON, 0},
		{"dot before exponent", q("5.e1"), CodeInvalidJSON, 0},
		{"empty exponent", q("5e"), CodeInvalidJSON, 0},
		{"signed empty exponent", q("5e+"), CodeInvalidJSON, 0},
		{"hex", q("0x10"), CodeInvalidJSON, 0},
		{"underscore", q("1_000"), CodeInvalidJSON, 0},
		{"NaN", q("NaN"), CodeInvalidJSON, 0},
		{"Infinity", q("Infinity"), CodeInvalidJSON, 0},
		{"missing value", q(""), CodeInvalidJSON, 0},
		// Values that are not numbers.
		{"string", q(`"5"`), CodeInvalidField, 0},
		{"true", q("true"), CodeInvalidField, 0},
		{"false", q("false"), CodeInvalidField, 0},
		{"null", q("null"), CodeInvalidField, 0},
		{"array", q("[]"), CodeInvalidField, 0},
		{"array of five", q("[5]"), CodeInvalidField, 0},
		{"object", q("{}"), CodeInvalidField, 0},
	})
}

func TestParseUpdateMessages(t *testing.T) {
	cases := []struct {
		body string
		want string // a substring of the message
	}{
		{`{"b":1,"a":2}`, `"b"`},                       // the first unknown member
		{`{"quantity":1,"st\u0061tus":1}`, `"status"`}, // named after unescaping
		{`{"quantity":1,"x":1,"x":2}`, `"x" appears twice`},
		{`{}`, "quantity"},
		{`{"quantity":"5"}`, "string"},
		{`{"quantity":5.5}`, "fractional"},
		{`{"quantity":-3}`, "negative"},
		{`{"quantity":3e10}`, "too large"},
		{``, "empty"},
		{"{\"a\":\"\xff\"}", "UTF-8"},
		{`[1]`, "an array"},
		{`{"quantity":1} 2`, "after the JSON object"},
		{`{"x":` + strings.Repeat("[", 100), "deeper than 64"},
	}
	for _, c := range cases {
		_, err := parseUpdate([]byte(c.body))
		if err == nil || !strings.Contains(err.message, c.want) {
			t.Errorf("parseUpdate(%.60q) = %v; want a message containing %q", c.body, err, c.want)
		}
	}
	// A huge member name or number is quoted only in part.
	for _, body := range []string{
		`{"` + strings.Repeat("é", 1000) + `":1}`,
		`{"quantity":` + strings.Repeat("7", 10000) + `}`,
		`{"quantity":0.` + strings.Repeat("7", 10000) + `}`,
		`{"quantity":-` + strings.Repeat("7", 10000) + `}`,
	} {
		_, err := parseUpdate([]byte(body))
		if err == nil || len(err.message) > 200 || !utf8.ValidString(err.message) {
			t.Errorf("parseUpdate(%.40q…): want a short valid message, got %v", body, err)
		}
	}
}

// parseUpdate documents that it allocates only on the error paths.
func TestParseUpdateDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds allocations")
	}
	for _, body := range []string{`{"quantity": 5}`, `{"quantity": 2147483647.000e0}`} {
		b := []byte(body)
		if n := testing.AllocsPerRun(100, func() { _, _ = parseUpdate(b) }); n != 0 {
			t.Errorf("parseUpdate(%s) allocates %.0f times; want 0", body, n)
		}
	}
}
