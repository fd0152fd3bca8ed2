package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/otelbridge"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

func newFlushCmd(io stdio) *cobra.Command {
	var (
		policyFile string
		timeout    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "flush",
		Short: "Upload the decision spans hooks left in the spool (collector down when they ran)",
		Long: `Each hook uploads its own span and what its spool slot holds, waiting at
most 200 ms; with the collector down the spans stay on disk. flush opens
every slot no hook holds now and uploads what it holds, waiting at most
--timeout. Exit 1 when spans are left unsent.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pol, err := loadHookPolicy(policyFile)
			if err != nil {
				return err
			}
			t, err := resolveExport(pol)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			var left int64
			for i := range spoolSlots {
				dir := slotDir(t.spoolDir, i)
				if _, err := os.Stat(dir); err != nil {
					continue
				}
				p, err := otelbridge.Setup(ctx, otelbridge.Config{
					Endpoint: t.endpoint, Insecure: t.insecure, Headers: t.headers, ServiceName: ServiceName, SkipCheck: true,
					Spool: spool.Config{Dir: dir, MaxBytes: slotMaxBytes, UploadTimeout: 5 * time.Second},
				})
				if err != nil {
					fmt.Fprintf(io.err, "%s: %v\n", dir, err)
					continue
				}
				before := p.Stats().Spool.Unsent
				_ = p.ForceFlush(ctx)
				sctx, scancel := context.WithTimeout(context.Background(), time.Second)
				_ = p.Shutdown(sctx)
				scancel()
				st := p.Stats().Spool
				left += st.Unsent
				fmt.Fprintf(io.out, "%s: %d spans held, %d sent, %d unsent\n", dir, before, st.Sent, st.Unsent)
			}
			if left > 0 {
				return fmt.Errorf("%d spans still unsent (is the collector at %s up?)", left, t.endpoint)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&policyFile, "policy", "", "policy file whose export section names the collector and the spool")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the collector")
	return cmd
}
