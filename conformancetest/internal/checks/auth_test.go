package checks

import "testing"

func TestParseChallenge(t *testing.T) {
	for _, tc := range []struct {
		in     string
		scheme string
		params map[string]string
		bad    bool
	}{
		{in: `Bearer realm="inventory"`, scheme: "Bearer", params: map[string]string{"realm": "inventory"}},
		{in: `Bearer realm="inventory", error="invalid_token"`, scheme: "Bearer", params: map[string]string{"realm": "inventory", "error": "invalid_token"}},
		{in: `bearer REALM=inventory,error=invalid_token`, scheme: "bearer", params: map[string]string{"realm": "inventory", "error": "invalid_token"}},
		{in: `Bearer realm="a \"b\""`, scheme: "Bearer", params: map[string]string{"realm": `a "b"`}},
		{in: `Bearer`, scheme: "Bearer", params: map[string]string{}},
		{in: `Bearer realm="x`, bad: true},
		{in: `Bearer realm`, bad: true},
		{in: `Bearer realm="a" error="b"`, bad: true},
		{in: `Bearer realm="a", realm="b"`, bad: true},
	} {
		scheme, params, err := parseChallenge(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("%s: err %v", tc.in, err)
			continue
		}
		if tc.bad {
			continue
		}
		if scheme != tc.scheme || len(params) != len(tc.params) {
			t.Errorf("%s: %q %v", tc.in, scheme, params)
		}
		for k, v := range tc.params {
			if params[k] != v {
				t.Errorf("%s: %s=%q, want %q", tc.in, k, params[k], v)
			}
		}
	}
}
