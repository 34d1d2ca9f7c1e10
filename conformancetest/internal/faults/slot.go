package faults

import "strings"

// KeySlot is the Redis Cluster slot of key: CRC16 (XMODEM) of its hash
// tag (the part between the first "{" and the next "}", when not empty),
// else of the whole key, modulo 16384.
func KeySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % 16384)
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), Redis Cluster's.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// StoreSlot is the slot of the keys of a store with the given key
// prefix: the store writes every key as "{prefix}:…", the prefix its
// hash tag.
func StoreSlot(prefix string) int { return KeySlot("{" + prefix + "}:") }
