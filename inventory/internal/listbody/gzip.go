package listbody

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
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

// crcPart is a piece of the body for CRC-32 combination (zlib's
// crc32_combine): its CRC and the operator that shifts a CRC past its
// length (x^(8·len) mod P).
type crcPart struct {
	crc, shift uint32
}

func newCRCPart(b []byte) crcPart {
	return crcPart{crc: crc32.ChecksumIEEE(b), shift: crcShift(int64(len(b)))}
}

// then returns the CRC of a piece with CRC crc followed by p.
func (p crcPart) then(crc uint32) uint32 { return crcMul(p.shift, crc) ^ p.crc }

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

// etags returns the list's entity tags for the identity and the gzip
// body, as header values: a digest of the state's cursor, which names the
// same state on every process, or, for a store that gives no cursor, of
// the identity body. The digest also covers the body's format, so that a
// release that encodes the list differently does not reuse a tag.
func etags(cursor string, pieces [][]byte) (identity, gzip []string) {
	h := sha256.New()
	h.Write([]byte(bodyFormat))
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

// bodyFormat names the list body's encoding in its entity tags.
const bodyFormat = "petinventory list v1\x00"
