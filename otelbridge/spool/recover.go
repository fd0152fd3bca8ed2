package spool

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// segments lists the log's segment files, oldest first.
func segments(walDir string) ([]string, error) {
	ents, err := os.ReadDir(walDir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spool: read %s: %w", walDir, err)
	}
	var segs []string
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || len(name) != 20 {
			continue
		}
		if n, err := strconv.ParseUint(name, 10, 64); err != nil || n == 0 {
			continue
		}
		segs = append(segs, name)
	}
	sort.Strings(segs) // zero-padded: lexical order is numeric order
	return segs, nil
}

// repairTail cuts a torn or corrupt end off the log's last segment file
// (tidwall/wal refuses to open a log whose last entry is incomplete, and
// has no checksum of its own): it keeps the longest prefix of entries that
// are complete with a valid record CRC. It reports whether it cut.
func repairTail(walDir string) (bool, error) {
	segs, err := segments(walDir)
	if err != nil || len(segs) == 0 {
		return false, err
	}
	path := filepath.Join(walDir, segs[len(segs)-1])
	data, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("spool: read %s: %w", path, err)
	}
	good := validPrefix(data)
	if good == len(data) {
		return false, nil
	}
	if err := os.Truncate(path, int64(good)); err != nil {
		return false, fmt.Errorf("spool: cut the torn end of %s: %w", path, err)
	}
	return true, nil
}

// tailSegment returns the first index and size of the log's last segment.
func tailSegment(walDir string) (uint64, int64, error) {
	segs, err := segments(walDir)
	if err != nil {
		return 0, 0, err
	}
	if len(segs) == 0 {
		return 0, 0, fmt.Errorf("spool: %s holds no log segment", walDir)
	}
	name := segs[len(segs)-1]
	fi, err := os.Stat(filepath.Join(walDir, name))
	if err != nil {
		return 0, 0, fmt.Errorf("spool: %w", err)
	}
	n, _ := strconv.ParseUint(name, 10, 64)
	return n, fi.Size(), nil
}

// validPrefix is the length of the longest prefix of whole tidwall/wal
// binary entries (uvarint length, data) holding valid records.
func validPrefix(data []byte) int {
	pos := 0
	for pos < len(data) {
		size, n := binary.Uvarint(data[pos:])
		if n <= 0 || size > uint64(len(data)-pos-n) {
			return pos
		}
		if _, err := decodeHeader(data[pos+n : pos+n+int(size)]); err != nil {
			return pos
		}
		pos += n + int(size)
	}
	return pos
}

// The ACK file holds the drainer's cursor: every record below it was
// acknowledged or dropped. 8 bytes index + CRC-32C; a torn or missing file
// means 0 (send everything again; duplicates are harmless).
//
// readAckValid returns the cursor and whether the file held a valid one.
func readAckValid(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) != 12 || crc32.Checksum(b[:8], castagnoli) != binary.BigEndian.Uint32(b[8:]) {
		return 0, false
	}
	return binary.BigEndian.Uint64(b), true
}

func encodeAck(idx uint64) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint64(b, idx)
	binary.BigEndian.PutUint32(b[8:], crc32.Checksum(b[:8], castagnoli))
	return b
}
