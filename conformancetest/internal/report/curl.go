package report

import (
	"fmt"
	"net/http"
	"strings"
)

// CurlRequest is a request as Curl needs it.
type CurlRequest struct {
	Method string
	URL    string
	// Auth is the Authorization header: nil sends "Bearer " and the key;
	// otherwise it is sent as Auth.Value when Auth.Send is set, and not
	// at all when it is not.
	Auth *CurlAuth
	// ContentType, AcceptEncoding, IfNoneMatch and CacheControl are sent
	// when not empty.
	ContentType    string
	AcceptEncoding string
	IfNoneMatch    string
	CacheControl   string
	Body           []byte
	Chunked        bool
}

// CurlAuth is the Authorization header of a CurlRequest.
type CurlAuth struct {
	Send  bool
	Value string
}

// Curl returns a shell command that sends the same request as r. The key
// is read from $INVENTORY_API_KEY (key, the run's key, never appears in
// the command); a body that is long (padding) or not printable is
// produced by printf/head/tr and piped in, so that the line stays short
// and exact.
func Curl(r CurlRequest, key string) string {
	var args []string
	args = append(args, "curl", "-sS", "-i")
	if r.Method == http.MethodHead {
		args = append(args, "--head")
	} else if r.Method != http.MethodGet || r.Body != nil {
		args = append(args, "-X", shellQuote(r.Method))
	}
	args = append(args, shellQuote(r.URL))
	switch a := r.Auth; {
	case a == nil:
		args = append(args, `-H "Authorization: Bearer `+KeyVar+`"`)
	case a.Send:
		args = append(args, `-H "Authorization: `+doubleQuotedWithKey(a.Value, key)+`"`)
	}
	if r.ContentType != "" {
		args = append(args, "-H", shellQuote("Content-Type: "+r.ContentType))
	} else if r.Body != nil {
		// curl would add a form Content-Type of its own.
		args = append(args, "-H", shellQuote("Content-Type:"))
	}
	if r.AcceptEncoding != "" {
		args = append(args, "-H", shellQuote("Accept-Encoding: "+r.AcceptEncoding))
	}
	if r.IfNoneMatch != "" {
		args = append(args, "-H", shellQuote("If-None-Match: "+r.IfNoneMatch))
	}
	if r.CacheControl != "" {
		args = append(args, "-H", shellQuote("Cache-Control: "+r.CacheControl))
	}
	if r.Chunked {
		args = append(args, "-H", shellQuote("Transfer-Encoding: chunked"))
	}
	producer := ""
	if r.Body != nil {
		if p, ok := bodyProducer(r.Body); ok {
			producer = p
			args = append(args, "--data-binary", "@-")
		} else {
			args = append(args, "--data-binary", shellQuote(string(r.Body)))
		}
	}
	cmd := strings.Join(args, " ")
	if producer != "" {
		cmd = producer + " | " + cmd
	}
	return cmd
}

// doubleQuotedWithKey returns v for use inside double quotes, with the key
// replaced by a reference to $INVENTORY_API_KEY.
func doubleQuotedWithKey(v, key string) string {
	esc := func(s string) string {
		var sb strings.Builder
		for _, c := range s {
			switch c {
			case '\\', '"', '$', '`':
				sb.WriteByte('\\')
			}
			sb.WriteRune(c)
		}
		return sb.String()
	}
	if key == "" || !strings.Contains(v, key) {
		return esc(v)
	}
	parts := strings.Split(v, key)
	var sb strings.Builder
	for i, p := range parts {
		if i > 0 {
			if p != "" && isIdentByte(p[0]) {
				sb.WriteString("${INVENTORY_API_KEY}")
			} else {
				sb.WriteString(KeyVar)
			}
		}
		sb.WriteString(esc(p))
	}
	return sb.String()
}

func isIdentByte(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// minRun is the length from which a run of one byte is produced by
// head|tr rather than written out.
const minRun = 64

// bodyProducer returns a shell command that writes body to stdout, when
// the body is too long or not printable enough for a quoted argument.
func bodyProducer(body []byte) (string, bool) {
	start, n := longestRun(body)
	if n >= minRun {
		c := body[start]
		var parts []string
		if start > 0 {
			parts = append(parts, printfBytes(body[:start]))
		}
		if c == 0 {
			parts = append(parts, fmt.Sprintf("head -c %d /dev/zero", n))
		} else {
			parts = append(parts, fmt.Sprintf(`head -c %d /dev/zero | tr '\0' %s`, n, printfEscapeQuoted(c)))
		}
		if rest := body[start+n:]; len(rest) > 0 {
			if p, ok := bodyProducer(rest); ok {
				parts = append(parts, p)
			} else {
				parts = append(parts, printfBytes(rest))
			}
		}
		return "{ " + strings.Join(parts, "; ") + "; }", true
	}
	for _, c := range body {
		if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			return printfBytes(body), true
		}
	}
	return "", false
}

func longestRun(b []byte) (start, n int) {
	for i := 0; i < len(b); {
		j := i
		for j < len(b) && b[j] == b[i] {
			j++
		}
		if j-i > n {
			start, n = i, j-i
		}
		i = j
	}
	return start, n
}

// printfBytes is a printf command that writes b exactly.
func printfBytes(b []byte) string {
	var sb strings.Builder
	sb.WriteString("printf '")
	for _, c := range b {
		sb.WriteString(printfEscape(c))
	}
	sb.WriteString("'")
	return sb.String()
}

// printfEscape escapes one byte for a single-quoted printf format.
func printfEscape(c byte) string {
	switch {
	case c == '%':
		return "%%"
	case c == '\\':
		return `\\`
	case c == '\'':
		return `\047`
	case c >= 0x20 && c < 0x7f:
		return string(c)
	}
	return fmt.Sprintf(`\%03o`, c)
}

// printfEscapeQuoted is one byte as a quoted argument for tr.
func printfEscapeQuoted(c byte) string {
	if c >= 0x20 && c < 0x7f && c != '\'' && c != '\\' {
		return "'" + string(c) + "'"
	}
	return fmt.Sprintf(`'\%03o'`, c)
}
