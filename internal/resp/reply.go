package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReplyError is an error reply of Redis ("-ERR …", "-WRONGPASS …",
// "-MOVED 866 127.0.0.1:7001").
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// Encode is a command as RESP sends it: an array of bulk strings.
func Encode(args []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// maxBulk bounds a bulk string or an array read, so that a peer that is
// not Redis cannot make the client allocate without end.
const maxBulk = 64 << 20

// ReadReply reads one RESP2 reply, as Conn.Do returns it.
func ReadReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("not a RESP reply: %q", strings.TrimSpace(line))
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return nil, ReplyError(body)
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("not a RESP integer: %q", body)
		}
		return n, nil
	case '$':
		return readBulk(r, body)
	case '*':
		return readArray(r, body)
	}
	return nil, fmt.Errorf("not a RESP reply: %q", strings.TrimSpace(line))
}

// length reads the length of a bulk string or an array: -1 (null) up to
// maxBulk.
func length(body, what string) (int, error) {
	n, err := strconv.Atoi(body)
	if err != nil || n < -1 || n > maxBulk {
		return 0, fmt.Errorf("not a RESP %s length: %q", what, body)
	}
	return n, nil
}

func readBulk(r *bufio.Reader, body string) (any, error) {
	n, err := length(body, "bulk")
	if err != nil || n == -1 {
		return nil, err
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	if buf[n] != '\r' || buf[n+1] != '\n' {
		return nil, errors.New("a RESP bulk string without its CRLF")
	}
	return string(buf[:n]), nil
}

func readArray(r *bufio.Reader, body string) (any, error) {
	n, err := length(body, "array")
	if err != nil || n == -1 {
		return nil, err
	}
	out := make([]any, 0, min(n, 1024))
	for range n {
		v, err := ReadReply(r)
		var re ReplyError
		if err != nil && !errors.As(err, &re) {
			return nil, err
		}
		if err != nil {
			v = re // an error inside an array is one of its elements
		}
		out = append(out, v)
	}
	return out, nil
}
