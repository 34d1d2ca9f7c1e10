package inventory

import "testing"

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"":                              false, // no header: identity (see acceptsGzip)
		"gzip":                          true,
		"GZIP":                          true,
		"x-gzip":                        true,
		"gzip, deflate, br":             true,
		"br, deflate":                   false,
		"deflate, gzip;q=1.0, *;q=0.5":  true,
		"gzip;q=0":                      false,
		"gzip;q=0.000":                  false,
		"gzip;q=0.001":                  true,
		"gzip; q=0.5":                   true,
		"gzip ;q=0.5":                   true,
		"gzip;Q=0.5":                    true,
		"*":                             true,
		"*;q=0":                         false,
		"*, gzip;q=0":                   false,
		"gzip;q=0, *":                   false,
		"identity":                      false,
		"identity;q=0, gzip":            true,
		"identity;q=0, *":               true,
		"identity;q=0":                  false, // no coding acceptable: identity all the same
		"gzip;q=0.5, identity":          false, // identity preferred
		"gzip;q=0.5, identity;q=0.5":    true,  // a tie: the smaller body
		"gzip;q=0.5, identity;q=0.4":    true,
		"gzip;q=0.5, *;q=0":             true, // identity refused by *
		"gzip;q=0.5, identity, *;q=0":   false,
		"gzip;q=2":                      false, // not a qvalue: ignored
		"gzip;q=1.5":                    false,
		"gzip;q=1.000":                  true,
		"gzip;q=0.1234":                 false,
		"gzip;q=":                       false,
		"gzip;q=abc":                    false,
		"gzip;q=abc, x-gzip":            true,
		"gzip;level=9":                  true, // unknown parameter: ignored
		" , ,gzip":                      true,
		"gzipx":                         false,
		"x-gzip;q=0, gzip":              false, // one coding named twice: the refusal wins
		"gzip;q=0, gzip":                false,
		"gzip, gzip;q=0.5, identity":    false, // gzip at its lowest, 0.5, under identity
		"identity;q=0, identity, gzip":  true,
		"gzip;q=0.3, deflate;q=0.9":     true,
		"compress;q=0.5, gzip;q=0.4, *": true,
	} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v; want %v", header, got, want)
		}
	}
}

func TestNoneMatch(t *testing.T) {
	const tag = `"abc"`
	for header, want := range map[string]bool{
		`"abc"`:               true,
		`W/"abc"`:             true,
		`"x", "abc"`:          true,
		`"x",W/"abc"`:         true,
		`*`:                   true,
		`"abc-gzip"`:          false,
		`"ab"`:                false,
		`abc`:                 false,
		`"a,b", "abc"`:        true, // a comma inside a tag
		`"x", garbage, "abc"`: false,
		`"abc`:                false,
		``:                    false,
		` "abc" `:             true,
		`w/"abc"`:             false, // W/ is case-sensitive
	} {
		if got := noneMatch(header, tag); got != want {
			t.Errorf("noneMatch(%q, %s) = %v; want %v", header, tag, got, want)
		}
	}
}
