// Command genseed writes an inventory of N pets as the JSON array that
// examples/redis -seed reads, for trying the server, or benchmarking it,
// at sizes the demo inventory does not reach:
//
//	go run ./examples/genseed -pets 1000000 > million.json
//	go run ./examples/genseed -pets 100000 -ids spread -o big.json
//	go run ./examples/redis -seed million.json
//
// The output is deterministic: the same flags give the same bytes, so a
// benchmark can be rerun on the same inventory. Every item is valid
// (quantity 0..1000, status available, pending or sold in roughly equal
// shares); with -ids seq (the default) the pet ids are 1..N in order,
// with -ids spread they are distinct, ascending, and spread over
// 1..1000·N. It is a tool, not an example to copy.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
)

func main() {
	err := run(os.Args[1:], os.Stdout)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	default:
		fmt.Fprintln(os.Stderr, "genseed:", err)
		os.Exit(1)
	}
}

// maxPets bounds -pets: 10 million pets is about 550 MB of JSON, more
// than any benchmark here needs, and a typo of a few zeros should not fill
// the disk.
const maxPets = 10_000_000

// maxQuantity is the largest quantity genseed writes: the API accepts
// far more, but small numbers keep the body the size real stock gives.
const maxQuantity = 1000

type config struct {
	pets   int
	spread bool
	seed   uint64
	out    string
}

func parseFlags(args []string, usage io.Writer) (config, error) {
	var c config
	var ids string
	fs := flag.NewFlagSet("genseed", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.IntVar(&c.pets, "pets", 1000, "number of pets (1.."+strconv.Itoa(maxPets)+")")
	fs.StringVar(&ids, "ids", "seq", "pet ids: seq (1..N) or spread (distinct, ascending, over 1..1000·N)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the generator: the same seed gives the same file")
	fs.StringVar(&c.out, "o", "", "file to write (default: standard output)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q; settings are flags (-pets, -ids, -seed, -o)", fs.Arg(0))
	}
	if c.pets < 1 || c.pets > maxPets {
		return c, fmt.Errorf("-pets %d: want 1..%d", c.pets, maxPets)
	}
	switch ids {
	case "seq":
	case "spread":
		c.spread = true
	default:
		return c, fmt.Errorf("-ids %q: want seq or spread", ids)
	}
	return c, nil
}

func run(args []string, stdout io.Writer) error {
	c, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	if c.out == "" {
		return write(stdout, c)
	}
	f, err := os.Create(c.out)
	if err != nil {
		return err
	}
	if err := write(f, c); err != nil {
		f.Close()
		os.Remove(c.out) // a truncated seed must not be mistaken for a whole one
		return err
	}
	return f.Close()
}

var statuses = [...]string{"available", "pending", "sold"}

// write writes the JSON array of c.pets items to w, one item per line.
func write(w io.Writer, c config) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	rng := rand.New(rand.NewPCG(c.seed, 0x9e3779b97f4a7c15))
	buf := make([]byte, 0, 128)
	for i := 1; i <= c.pets; i++ {
		id := int64(i)
		if c.spread {
			// One id in each block of 1000: distinct and ascending.
			id = int64(i-1)*1000 + 1 + rng.Int64N(1000)
		}
		buf = buf[:0]
		if i == 1 {
			buf = append(buf, '[')
		} else {
			buf = append(buf, ",\n"...)
		}
		buf = append(buf, `{"petId":`...)
		buf = strconv.AppendInt(buf, id, 10)
		buf = append(buf, `,"quantity":`...)
		buf = strconv.AppendInt(buf, rng.Int64N(maxQuantity+1), 10)
		buf = append(buf, `,"status":"`...)
		buf = append(buf, statuses[rng.IntN(len(statuses))]...)
		buf = append(buf, `"}`...)
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	if _, err := bw.WriteString("]\n"); err != nil {
		return err
	}
	return bw.Flush()
}
