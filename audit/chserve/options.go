package chserve

import (
	"io"
	"log/slog"
	"os"
)

// DefaultMaxBodyBytes is the default request body limit: 256 MiB after
// decompression.
const DefaultMaxBodyBytes = 256 << 20

type options struct {
	users          []User
	allowAnonymous bool
	maxBodyBytes   int64
	tempDir        string
	logger         *slog.Logger
	inlineValues   int
}

// Option configures a [Server].
type Option func(*options)

// WithUsers sets the accounts that may authenticate (see [ParseUsers]).
func WithUsers(users ...User) Option {
	return func(o *options) { o.users = append(o.users, users...) }
}

// WithAnonymous lets requests without credentials in, as [RoleAnonymous].
// For throwaway local use only.
func WithAnonymous(allow bool) Option {
	return func(o *options) { o.allowAnonymous = allow }
}

// WithMaxBodyBytes limits a request body, counted after decompression, in
// bytes. A larger body is refused with TOO_MANY_BYTES (HTTP 413) and
// nothing of it is executed. n <= 0 means [DefaultMaxBodyBytes].
func WithMaxBodyBytes(n int64) Option {
	return func(o *options) {
		if n <= 0 {
			n = DefaultMaxBodyBytes
		}
		o.maxBodyBytes = n
	}
}

// WithTempDir sets where INSERT data is spooled before the engine reads it
// with INSERT … FROM INFILE (default: os.TempDir()).
func WithTempDir(dir string) Option {
	return func(o *options) { o.tempDir = dir }
}

// WithLogger sets the logger for request errors and shutdown (default:
// discard).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

func defaultOptions() options {
	return options{
		maxBodyBytes: DefaultMaxBodyBytes,
		tempDir:      os.TempDir(),
		logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		inlineValues: 32 << 10,
	}
}
