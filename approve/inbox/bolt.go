package inbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toolgate/toolgate/gate"
)

// DefaultLockTimeout is OpenConfig.LockTimeout's default.
const DefaultLockTimeout = 10 * time.Second

// OpenConfig configures Open.
type OpenConfig struct {
	// LockTimeout bounds the wait for the file lock that another process
	// holds during its operation (0: DefaultLockTimeout, 10 s). An
	// operation that does not get the lock in time fails with an error
	// wrapping bbolt's ErrTimeout.
	LockTimeout time.Duration
	// GrantTTL is how long a grant "for the rest of this run" lasts
	// (0: DefaultGrantTTL, 24 h): a later run that reuses a run ID after
	// that is asked again. Grants from before GrantTTL was kept count as
	// expired.
	GrantTTL time.Duration
}

// DefaultGrantTTL is how long a persisted run grant lasts by default.
const DefaultGrantTTL = 24 * time.Hour

// Bucket names of the DB file.
const (
	bucketRequests  = "requests"  // request ID → Request as JSON
	bucketApprovers = "approvers" // approver name → hex sha256 of its token
	bucketTokens    = "tokens"    // hex sha256 of a token → approver name
	bucketGrants    = "grants"    // runID \x00 grant key → "1"
)

// DB is the default Store and Approvers: one bbolt file that it opens only
// for the length of each operation, so that several processes (the agent,
// auditq, the HTTP server) share it. It also implements gate.GrantStore, so
// that "for the rest of this run" grants survive a restart.
//
// Reads (Get, List, Known, ByToken, Granted) take a shared lock on the
// file, writes an exclusive one; within one process a DB also serialises
// its writes itself, so goroutines do not poll the file lock. A DB is safe
// for concurrent use; use it by pointer.
type DB struct {
	path string
	cfg  OpenConfig
	mu   sync.RWMutex // writers exclusive within this process
}

var (
	_ Store           = (*DB)(nil)
	_ Approvers       = (*DB)(nil)
	_ gate.GrantStore = (*DB)(nil)
)

// Open returns the DB at path, creating the file (mode 0600), its parent
// directory (mode 0700) and its buckets if needed; it checks that the file
// opens.
func Open(path string, cfg OpenConfig) (*DB, error) {
	if path == "" {
		return nil, errors.New("inbox: empty DB path")
	}
	if cfg.LockTimeout <= 0 {
		cfg.LockTimeout = DefaultLockTimeout
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("inbox: create DB directory: %w", err)
		}
	}
	db := &DB{path: path, cfg: cfg}
	if _, err := os.Stat(path); err == nil && db.view(context.Background(), checkBuckets) == nil {
		return db, nil // an inbox file already; no write lock needed
	}
	err := db.update(context.Background(), func(tx *bolt.Tx) error {
		for _, b := range []string{bucketRequests, bucketApprovers, bucketTokens, bucketGrants} {
			if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return db, nil
}

// Path returns the DB's file name.
func (db *DB) Path() string { return db.path }

func (db *DB) open(readOnly bool) (*bolt.DB, error) {
	b, err := bolt.Open(db.path, 0o600, &bolt.Options{Timeout: db.cfg.LockTimeout, ReadOnly: readOnly})
	if err != nil {
		return nil, fmt.Errorf("inbox: open %s: %w", db.path, err)
	}
	return b, nil
}

// update runs f in a write transaction on the file, opened for it alone.
func (db *DB) update(ctx context.Context, f func(tx *bolt.Tx) error) error {
	return db.tx(ctx, false, f)
}

// view runs f in a read transaction on the file, opened read-only for it.
func (db *DB) view(ctx context.Context, f func(tx *bolt.Tx) error) error {
	return db.tx(ctx, true, f)
}

// tx opens the file (read-only or for writing), runs f in one transaction
// of that kind and closes the file. Within the process, writers exclude
// each other and readers (db.mu); across processes, bbolt's file lock does.
func (db *DB) tx(ctx context.Context, readOnly bool, f func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if readOnly {
		db.mu.RLock()
		defer db.mu.RUnlock()
	} else {
		db.mu.Lock()
		defer db.mu.Unlock()
	}
	b, err := db.open(readOnly)
	if err != nil {
		return err
	}
	if readOnly {
		err = b.View(f)
	} else {
		err = b.Update(f)
	}
	if cerr := b.Close(); err == nil && cerr != nil && !readOnly {
		err = fmt.Errorf("inbox: close %s: %w", db.path, cerr)
	}
	return err
}

// checkBuckets reports a missing bucket.
func checkBuckets(tx *bolt.Tx) error {
	for _, b := range []string{bucketRequests, bucketApprovers, bucketTokens, bucketGrants} {
		if _, err := bucket(tx, b); err != nil {
			return err
		}
	}
	return nil
}

func bucket(tx *bolt.Tx, name string) (*bolt.Bucket, error) {
	b := tx.Bucket([]byte(name))
	if b == nil {
		return nil, fmt.Errorf("inbox: DB file has no %q bucket (not an inbox file?)", name)
	}
	return b, nil
}

// Create implements Store.
func (db *DB) Create(ctx context.Context, r Request) error {
	if r.ID == "" {
		return errors.New("inbox: request without ID")
	}
	v, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("inbox: encode request: %w", err)
	}
	return db.update(ctx, func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketRequests)
		if err != nil {
			return err
		}
		if b.Get([]byte(r.ID)) != nil {
			return ErrExists
		}
		return b.Put([]byte(r.ID), v)
	})
}

func decodeRequest(id string, v []byte) (Request, error) {
	var r Request
	if err := json.Unmarshal(v, &r); err != nil {
		return Request{}, fmt.Errorf("inbox: decode request %s: %w", id, err)
	}
	return r, nil
}

// Get implements Store. It returns the request as stored (no expiry
// applied; Inbox.Get applies it).
func (db *DB) Get(ctx context.Context, id string) (Request, error) {
	var r Request
	err := db.view(ctx, func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketRequests)
		if err != nil {
			return err
		}
		v := b.Get([]byte(id))
		if v == nil || id == "" {
			return ErrNotFound
		}
		r, err = decodeRequest(id, v)
		return err
	})
	return r, err
}

// Update implements Store: one write transaction under the file's
// exclusive lock, so it is atomic across processes too. f cannot change
// the request's ID.
func (db *DB) Update(ctx context.Context, id string, f func(*Request) error) (Request, error) {
	var out Request
	err := db.update(ctx, func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketRequests)
		if err != nil {
			return err
		}
		v := b.Get([]byte(id))
		if v == nil || id == "" {
			return ErrNotFound
		}
		r, err := decodeRequest(id, v)
		if err != nil {
			return err
		}
		if err := f(&r); err != nil {
			return err
		}
		r.ID = id
		nv, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("inbox: encode request: %w", err)
		}
		if !bytes.Equal(nv, v) {
			if err := b.Put([]byte(id), nv); err != nil {
				return err
			}
		}
		out = r
		return nil
	})
	if err != nil {
		return Request{}, err
	}
	return out, nil
}

// List implements Store: the requests that match f's Agent, RunID and
// OlderThan (measured from f.Now, or time.Now when it is zero), newest
// (latest AskedAt) first, at most f.Limit of them. f.Status is ignored.
func (db *DB) List(ctx context.Context, f Filter) ([]Request, error) {
	var out []Request
	now := f.Now
	if now.IsZero() {
		now = time.Now()
	}
	err := db.view(ctx, func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketRequests)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			r, err := decodeRequest(string(k), v)
			if err != nil {
				return err
			}
			if matchStored(r, f, now) {
				out = append(out, r)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sortNewest(out)
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// matchStored applies the filter's fields other than Status.
func matchStored(r Request, f Filter, now time.Time) bool {
	if f.Agent != "" && r.Agent != f.Agent {
		return false
	}
	if f.RunID != "" && r.RunID != f.RunID {
		return false
	}
	if f.OlderThan > 0 && now.Sub(r.AskedAt) < f.OlderThan {
		return false
	}
	return true
}

// sortNewest orders requests by AskedAt, latest first (ID breaks ties).
func sortNewest(rs []Request) {
	sort.SliceStable(rs, func(i, j int) bool {
		if !rs[i].AskedAt.Equal(rs[j].AskedAt) {
			return rs[i].AskedAt.After(rs[j].AskedAt)
		}
		return rs[i].ID > rs[j].ID
	})
}

// Add implements Approvers. name must be non-empty, at most
// gate.MaxNameBytes bytes of valid UTF-8 without control characters. The
// token is 32 random bytes, base64url without padding (43 characters); the
// DB keeps only its hex SHA-256.
func (db *DB) Add(ctx context.Context, name string) (string, error) {
	if err := checkApproverName(name); err != nil {
		return "", err
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails (Go 1.24+)
	token := base64.RawURLEncoding.EncodeToString(raw[:])
	h := tokenHash(token)
	err := db.update(ctx, func(tx *bolt.Tx) error {
		ab, err := bucket(tx, bucketApprovers)
		if err != nil {
			return err
		}
		tb, err := bucket(tx, bucketTokens)
		if err != nil {
			return err
		}
		if old := ab.Get([]byte(name)); old != nil {
			if err := tb.Delete(old); err != nil {
				return err
			}
		}
		if err := ab.Put([]byte(name), []byte(h)); err != nil {
			return err
		}
		return tb.Put([]byte(h), []byte(name))
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// checkApproverName refuses names an answer could not be recorded under.
func checkApproverName(name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("%w: empty approver name", ErrUnknownApprover)
	}
	if len(name) > gate.MaxNameBytes || gate.SafeText(name, gate.MaxNameBytes) != name ||
		strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("inbox: approver name must be at most %d bytes of printable UTF-8", gate.MaxNameBytes)
	}
	return nil
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Known implements Approvers.
func (db *DB) Known(ctx context.Context, name string) (bool, error) {
	if name == "" || len(name) > gate.MaxNameBytes {
		return false, nil
	}
	var ok bool
	err := db.view(ctx, func(tx *bolt.Tx) error {
		ab, err := bucket(tx, bucketApprovers)
		if err != nil {
			return err
		}
		ok = ab.Get([]byte(name)) != nil
		return nil
	})
	return ok, err
}

// ByToken implements Approvers. The token's hash is looked up, and the
// approver's stored hash compared with it in constant time.
func (db *DB) ByToken(ctx context.Context, token string) (string, bool, error) {
	if token == "" || len(token) > 1024 {
		return "", false, nil
	}
	h := tokenHash(token)
	var name string
	var ok bool
	err := db.view(ctx, func(tx *bolt.Tx) error {
		ab, err := bucket(tx, bucketApprovers)
		if err != nil {
			return err
		}
		tb, err := bucket(tx, bucketTokens)
		if err != nil {
			return err
		}
		n := tb.Get([]byte(h))
		if n == nil {
			return nil
		}
		stored := ab.Get(n)
		if stored != nil && subtle.ConstantTimeCompare(stored, []byte(h)) == 1 {
			name, ok = string(n), true
		}
		return nil
	})
	if err != nil || !ok {
		return "", false, err
	}
	return name, true, nil
}

func grantKey(runID, key string) []byte {
	return []byte(runID + "\x00" + key)
}

// Grant implements gate.GrantStore; grants are kept in the file with the
// time they were given (unix nanoseconds), and last GrantTTL.
func (db *DB) Grant(ctx context.Context, runID, key string) error {
	if runID == "" || key == "" {
		return errors.New("inbox: grant needs a run ID and a key")
	}
	if len(runID)+len(key) > 4096 {
		return errors.New("inbox: grant run ID or key too long")
	}
	return db.update(ctx, func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketGrants)
		if err != nil {
			return err
		}
		return b.Put(grantKey(runID, key), strconv.AppendInt(nil, time.Now().UnixNano(), 10))
	})
}

// Granted implements gate.GrantStore.
func (db *DB) Granted(ctx context.Context, runID, key string) (bool, error) {
	if runID == "" || key == "" || len(runID)+len(key) > 4096 {
		return false, nil
	}
	var ok bool
	err := db.view(ctx, func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketGrants)
		if err != nil {
			return err
		}
		v := b.Get(grantKey(runID, key))
		if v == nil {
			return nil
		}
		at, perr := strconv.ParseInt(string(v), 10, 64)
		ok = perr == nil && time.Since(time.Unix(0, at)) < db.grantTTL()
		return nil
	})
	return ok, err
}

func (db *DB) grantTTL() time.Duration {
	if db.cfg.GrantTTL > 0 {
		return db.cfg.GrantTTL
	}
	return DefaultGrantTTL
}

// idPrefix starts every request ID.
const idPrefix = "apr_"

// idLen is the length of a request ID: the prefix and 26 characters (16
// random bytes).
const idLen = len(idPrefix) + 26

// NewID returns a new random request ID: "apr_" and 26 lowercase base32
// characters (128 bits from crypto/rand).
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	enc := base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
	return idPrefix + enc.EncodeToString(b[:])
}

// ValidID reports whether id has the shape of a request ID (NewID).
func ValidID(id string) bool {
	if len(id) != idLen || !strings.HasPrefix(id, idPrefix) {
		return false
	}
	for _, c := range id[len(idPrefix):] {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}
