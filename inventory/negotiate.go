package inventory

import "strings"

// GzipMinBytes is the size of the identity list body below which a list
// is always answered identity, even to a client that accepts gzip: under
// about one packet, compression saves no round trip and costs both sides
// CPU.
const GzipMinBytes = 1400

// acceptsGzip reports whether a request with this Accept-Encoding value
// is answered gzip rather than identity, by RFC 9110 section 12.5.3: gzip
// (or x-gzip, or * when neither is named) must have a non-zero qvalue at
// least that of identity. Identity is acceptable unless refused by
// "identity;q=0", or by "*;q=0" without identity named. An absent or
// empty header asks for identity: RFC 9110 would allow any coding without
// the header, but a client that sends none (curl without --compressed) may
// not decode one. Elements that do not parse are ignored. A coding named
// more than once (gzip and x-gzip are one) takes its lowest qvalue, so
// that a refusal ("gzip;q=0, gzip") is never overruled.
func acceptsGzip(header string) bool {
	if header == "" {
		return false
	}
	qGzip, qIdentity, qAny := -1, -1, -1
	for elem := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(elem, ";")
		coding = strings.TrimSpace(coding)
		q, ok := parseWeight(params)
		if !ok {
			continue
		}
		switch {
		case strings.EqualFold(coding, "gzip"), strings.EqualFold(coding, "x-gzip"):
			qGzip = lowest(qGzip, q)
		case strings.EqualFold(coding, "identity"):
			qIdentity = lowest(qIdentity, q)
		case coding == "*":
			qAny = lowest(qAny, q)
		}
	}
	if qGzip < 0 {
		qGzip = qAny
	}
	if qIdentity < 0 {
		qIdentity = 1 // identity is acceptable unless refused …
		if qAny == 0 {
			qIdentity = 0 // … by *;q=0, when not named
		}
	}
	return qGzip > 0 && qGzip >= qIdentity
}

// lowest returns q, or the qvalue already seen when lower; -1 is none seen.
func lowest(seen, q int) int {
	if seen < 0 {
		return q
	}
	return min(seen, q)
}

// parseWeight parses an element's parameters: an optional weight
// ("q=" qvalue, RFC 9110 12.4.2) among them, in thousandths; 1000 when
// there is none; false when it does not parse.
func parseWeight(params string) (int, bool) {
	q := 1000
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		p = strings.TrimSpace(p)
		name, value, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
			if p == "" {
				continue
			}
			if !ok {
				return 0, false
			}
			continue // another parameter: not defined for codings, ignored
		}
		v, ok := parseQValue(strings.TrimSpace(value))
		if !ok {
			return 0, false
		}
		q = v
	}
	return q, true
}

// parseQValue parses "0" ["." 0*3DIGIT] / "1" ["." 0*3("0")] into
// thousandths.
func parseQValue(s string) (int, bool) {
	if s == "" || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	whole := int(s[0] - '0')
	frac := s[1:]
	if frac == "" {
		return whole * 1000, true
	}
	if frac[0] != '.' || len(frac) > 4 {
		return 0, false
	}
	v, scale := 0, 100
	for i := 1; i < len(frac); i++ {
		c := frac[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v += int(c-'0') * scale
		scale /= 10
	}
	if whole == 1 && v != 0 {
		return 0, false
	}
	return whole*1000 + v, true
}

// noneMatch reports whether an If-None-Match value matches the entity tag
// tag (a quoted strong tag), by the weak comparison of RFC 9110 13.1.2:
// "*" matches any, and a listed tag matches when its opaque part equals
// tag's, whether or not it is marked weak (W/). Tags that do not parse
// end the list: what was read before them still counts.
func noneMatch(header, tag string) bool {
	s := header
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return false
		}
		if s[0] == '*' {
			return true
		}
		s = strings.TrimPrefix(s, "W/")
		if s == "" || s[0] != '"' {
			return false
		}
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return false
		}
		if s[:end+2] == tag {
			return true
		}
		s = s[end+2:]
	}
}

// noCache reports whether a request's Cache-Control value (its lines
// joined by commas) holds the no-cache directive (RFC 9111 section
// 5.2.1.4): the client wants no stored answer, so a list then shows the
// store's current state even under WithMaxStaleness. Directive names are
// case-insensitive; an argument is ignored.
func noCache(header string) bool {
	if header == "" {
		return false
	}
	for elem := range strings.SplitSeq(header, ",") {
		name, _, _ := strings.Cut(elem, "=")
		if strings.EqualFold(strings.TrimSpace(name), "no-cache") {
			return true
		}
	}
	return false
}
