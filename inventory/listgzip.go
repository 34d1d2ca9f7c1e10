package inventory

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"strings"
	"sync"
)

// The gzip list is built from the same segments as the identity list:
// each segment keeps the raw DEFLATE compression of its encoding, made
// once when the segment is encoded and ended by a sync flush (on a byte
// boundary, no final block), so that the compressed pieces of a state's
// segments concatenate into one valid DEFLATE stream, as parallel gzip
// tools do. A gzip answer is then a fixed header, "[" compressed, the
// segments' pieces separated by a compressed ",", "]" compressed with the
// final block, and the trailer, whose CRC-32 follows from the segments'
// CRCs by CRC combination: nothing is compressed or checksummed per
// request, and a change compresses only the segments it re-encodes.

// gzipLevel is the DEFLATE level of the segments: the fastest, because a
// segment is compressed again whenever one of its entries changes, and the
// list's JSON compresses almost as well at it as at the default level.
const gzipLevel = flate.BestSpeed

// GzipMinBytes is the size of the identity list body below which a list
// is always answered identity, even to a client that accepts gzip: under
// about one packet, compression saves no round trip and costs both sides
// CPU.
const GzipMinBytes = 1400

// gzipHeader is the gzip member header (RFC 1952): DEFLATE, no flags, no
// modification time, "fastest" extra flags, unknown OS, as compress/gzip
// writes it at BestSpeed.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff}

// The compressed pieces between segments, made once.
var (
	gzOpen  = deflateBytes([]byte("["), false)
	gzComma = deflateBytes([]byte(","), false)
	gzClose = deflateBytes([]byte("]"), true)
)

var flateWriters = sync.Pool{New: func() any {
	w, err := flate.NewWriter(nil, gzipLevel)
	if err != nil {
		panic(err) // gzipLevel is a valid level
	}
	return w
}}

// deflateBytes returns the raw DEFLATE compression of b, ended by a sync
// flush, or with final, by the stream's final block.
func deflateBytes(b []byte, final bool) []byte {
	var out bytes.Buffer
	out.Grow(len(b)/4 + 64)
	w := flateWriters.Get().(*flate.Writer)
	w.Reset(&out)
	_, _ = w.Write(b) // a bytes.Buffer never fails
	if final {
		_ = w.Close()
	} else {
		_ = w.Flush()
	}
	flateWriters.Put(w)
	return bytes.Clone(out.Bytes()) // exactly its size: it is kept
}

// crcPart is a piece of the body for CRC-32 combination: its CRC and the
// operator that shifts a CRC past its length (x^(8·len) mod P).
type crcPart struct {
	crc, shift uint32
}

func newCRCPart(b []byte) crcPart {
	return crcPart{crc: crc32.ChecksumIEEE(b), shift: crcShift(int64(len(b)))}
}

// then returns the CRC of a piece with CRC crc followed by p.
func (p crcPart) then(crc uint32) uint32 { return crcMul(p.shift, crc) ^ p.crc }

// crc32Combine returns the CRC-32 (IEEE) of A followed by B, given the
// CRC of A, the CRC of B and the length of B, as zlib's crc32_combine.
func crc32Combine(crcA, crcB uint32, lenB int64) uint32 {
	return crcMul(crcShift(lenB), crcA) ^ crcB
}

// crcMul multiplies a and b modulo the CRC-32 polynomial, in the
// reflected bit order of the IEEE CRC (zlib's multmodp).
func crcMul(a, b uint32) uint32 {
	m := uint32(1) << 31
	var p uint32
	for {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				return p
			}
		}
		m >>= 1
		if b&1 != 0 {
			b = b>>1 ^ crc32.IEEE
		} else {
			b >>= 1
		}
	}
}

// crcPowers[k] is x^(2^k) mod P.
var crcPowers = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	t[0] = p
	for k := 1; k < 32; k++ {
		p = crcMul(p, p)
		t[k] = p
	}
	return t
}()

// crcShift returns x^(8·n) mod P: multiplying a CRC by it appends n zero
// bytes' worth of shift (zlib's x2nmodp(n, 3)).
func crcShift(n int64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; k++ {
		if n&1 != 0 {
			p = crcMul(crcPowers[k&31], p)
		}
		n >>= 1
	}
	return p
}

// gzipTrailer is the gzip member trailer: CRC-32 and size mod 2^32 of the
// uncompressed data, little-endian.
func gzipTrailer(crc uint32, size int) []byte {
	t := make([]byte, 8)
	binary.LittleEndian.PutUint32(t, crc)
	binary.LittleEndian.PutUint32(t[4:], uint32(size))
	return t
}

var (
	crcOpen  = newCRCPart([]byte("["))
	crcComma = newCRCPart([]byte(","))
	crcClose = newCRCPart([]byte("]"))
)

// listETags returns the list's entity tags for the identity and the gzip
// body, as header values: a digest of the state's cursor, which names the
// same state on every process, or, for a store that gives no cursor, of
// the identity body. The digest also covers the body's format, so that a
// release that encodes the list differently does not reuse a tag.
func listETags(cursor string, pieces [][]byte) (identity, gzip []string) {
	h := sha256.New()
	h.Write([]byte(listFormat))
	if cursor != "" {
		h.Write([]byte("cursor\x00"))
		h.Write([]byte(cursor))
	} else {
		h.Write([]byte("body\x00"))
		for _, p := range pieces {
			h.Write(p)
		}
	}
	var sum [sha256.Size]byte
	d := hex.EncodeToString(h.Sum(sum[:0])[:16])
	return []string{`"` + d + `"`}, []string{`"` + d + `-gzip"`}
}

// listFormat names the list body's encoding in its entity tags.
const listFormat = "petinventory list v1\x00"

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
