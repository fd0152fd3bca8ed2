package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
)

// Status answers pending, applied or changed whatever options the schema
// was migrated with: --retention, --database and --cluster change the
// generated SQL but not what a step is (auditq migrate --status after
// migrate --retention 365d said "applied (with different SQL)").
func TestStatusIsIndependentOfOptions(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	year := 365 * 24 * time.Hour
	_, err := audit.Migrate(ctx, env.Writer, audit.WithDatabase("kept"), audit.WithRetention(year))
	require.NoError(t, err)

	// An older auditq recorded the checksum of the SQL with its options.
	legacy := []audit.Option{audit.WithDatabase("legacy"), audit.WithRetention(year)}
	_, err = audit.Migrate(ctx, env.Writer, legacy...)
	require.NoError(t, err)
	ms, err := audit.Migrations(legacy...)
	require.NoError(t, err)
	for _, m := range ms {
		record(t, env, "legacy", m.Version, m.Name, m.Checksum())
	}

	// A step whose SQL really changed after it was applied.
	_, err = audit.Migrate(ctx, env.Writer, audit.WithDatabase("edited"))
	require.NoError(t, err)
	record(t, env, "edited", 2, "gate_decisions", "0123456789abcdef")

	n := len(ms)
	tests := []struct {
		name    string
		opts    []audit.Option
		changed []int
	}{
		{"same options", []audit.Option{audit.WithDatabase("kept"), audit.WithRetention(year)}, nil},
		{"without the retention", []audit.Option{audit.WithDatabase("kept")}, nil},
		{"another retention", []audit.Option{audit.WithDatabase("kept"), audit.WithRetention(30 * 24 * time.Hour)}, nil},
		{"a cluster", []audit.Option{audit.WithDatabase("kept"), audit.WithCluster("audit")}, nil},
		{"legacy record, same options", legacy, nil},
		{"legacy record, without the retention (read from the table's TTL)", []audit.Option{audit.WithDatabase("legacy")}, nil},
		{"default database, no options", nil, nil},
		{"changed SQL", []audit.Option{audit.WithDatabase("edited")}, []int{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sts, err := audit.Status(ctx, env.Writer, tc.opts...)
			require.NoError(t, err)
			require.Len(t, sts, n)
			var changed []int
			for _, s := range sts {
				assert.True(t, s.Applied, "version %d", s.Version)
				if s.Changed {
					changed = append(changed, s.Version)
				}
			}
			assert.Equal(t, tc.changed, changed)
		})
	}

	// Nothing applied in a database no migration ran in: all pending.
	sts, err := audit.Status(ctx, env.Writer, audit.WithDatabase("empty"))
	require.NoError(t, err)
	for _, s := range sts {
		assert.False(t, s.Applied || s.Changed, "version %d", s.Version)
	}
}

// record writes a schema_migrations row that replaces version's.
func record(t *testing.T, env *audittest.Env, database string, version int, name, sum string) {
	t.Helper()
	time.Sleep(2 * time.Millisecond) // a later AppliedAt wins in ReplacingMergeTree(AppliedAt)
	var p audit.Params
	p.Int64("v", int64(version)).String("n", name).String("c", sum)
	err := env.Writer.Exec(p.Context(context.Background()), "INSERT INTO `"+database+"`.`schema_migrations` (Version, Name, Checksum) SELECT {v:UInt32}, {n:String}, {c:String}")
	require.NoError(t, err)
}
