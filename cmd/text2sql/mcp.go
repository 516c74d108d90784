package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/text2sql-go/text2sql/server"
)

func mcpCmd(o *options) *cobra.Command {
	var logFormat string
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP over standard input and output, for an agent that starts this command",
		Long: `Serve the MCP tools ask, generate_sql, run_sql, describe_schema and
list_examples over standard input and output (the stdio transport), for the
database the shared flags name (--db or --demo, --knowledge, --provider, ...).

run_sql goes through the same read-only guard as every other entry point.
Standard output carries the protocol only; logs go to standard error. The
calling agent is the local user: there is no authentication or rate limit.
For MCP over HTTP, use serve (it mounts /mcp behind its authentication).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			logger, err := newLogger(cmd.ErrOrStderr(), logFormat)
			if err != nil {
				return err
			}
			cfg, release, err := openService(ctx, o, nil, logger)
			if err != nil {
				return err
			}
			defer release()
			cfg.Auth = server.NoAuth()
			cfg.LocalPrincipal = o.caller.principal()
			srv, err := server.NewMCPServer(cfg)
			if err != nil {
				return err
			}
			logger.Info("serving MCP on stdio", slog.String("dialect", string(cfg.Info.Dialect)))
			if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
				return err
			}
			return nil
		},
	}
	c.Flags().StringVar(&logFormat, "log-format", "text", "log format on standard error: text or json")
	return c
}
