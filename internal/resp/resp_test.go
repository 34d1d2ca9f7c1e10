package resp

import (
	"bufio"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The codec is tested here; Conn against a real redis-server where a
// server can be started: the conformance suite's faults (their copy,
// conformancetest/internal/faults) and every rig of internal/redistest
// (the source).

func TestReadReply(t *testing.T) {
	in := "+OK\r\n-ERR bad\r\n:42\r\n$3\r\nabc\r\n$-1\r\n*3\r\n:1\r\n$0\r\n\r\n-ERR in\r\n*-1\r\n*2\r\n*1\r\n+x\r\n$1\r\n\n\r\n"
	r := bufio.NewReader(strings.NewReader(in))
	want := []string{"OK", "error ERR bad", "42", "abc", "<nil>", "[1  ERR in]", "<nil>", "[[x] \n]"}
	for _, w := range want {
		v, err := ReadReply(r)
		got := fmt.Sprint(v)
		if err != nil {
			got = "error " + err.Error()
		}
		if got != w {
			t.Errorf("reply %q, want %q", got, w)
		}
	}
	for _, bad := range []string{"?x\r\n", "$5\r\nab\r\n", "$2\r\nabcd", ":x\r\n", "$99999999999\r\n", "*-2\r\n", "+OK\n", "", "*2\r\n:1\r\n"} {
		if _, err := ReadReply(bufio.NewReader(strings.NewReader(bad))); err == nil || errors.As(err, new(ReplyError)) {
			t.Errorf("%q: want a protocol error, got %v", bad, err)
		}
	}
}

// TestEncode: a command is an array of bulk strings, which ReadReply
// reads back whole, CRLF and empty arguments included.
func TestEncode(t *testing.T) {
	args := []string{"SET", "k", "v\r\nx", ""}
	if got := Encode(args); got != "*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\nv\r\nx\r\n$0\r\n\r\n" {
		t.Errorf("Encode = %q", got)
	}
	v, err := ReadReply(bufio.NewReader(strings.NewReader(Encode(args))))
	if err != nil || !reflect.DeepEqual(v, []any{"SET", "k", "v\r\nx", ""}) {
		t.Errorf("read back: %q, %v", v, err)
	}
}

func ExampleReadReply() {
	r := bufio.NewReader(strings.NewReader("*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6379\r\n-NOPERM no\r\n"))
	v, err := ReadReply(r) // SENTINEL get-master-addr-by-name's answer
	fmt.Println(v, err)
	_, err = ReadReply(r)
	var re ReplyError
	fmt.Println(errors.As(err, &re), re)
	// Output:
	// [127.0.0.1 6379] <nil>
	// true NOPERM no
}
