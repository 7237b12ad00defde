package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/timetabledb/timetable/api"
	"github.com/timetabledb/timetable/engine"
	"github.com/timetabledb/timetable/server"
	"github.com/timetabledb/timetable/tenant"
)

// tenantRow is a tenant as the tenant commands print it, and as the admin
// API answers it.
type tenantRow = api.Tenant

// keyRow is an API key as the tenant commands print it, and as the admin
// API answers it; Secret only where the key is made.
type keyRow = api.Key

// rotation is a rotated key: the new one, secret included, and the old
// one with its end.
type rotation = api.KeyRotated

// tenantAdmin keeps tenants and their keys: the store's tenant directory,
// or a server's admin API (remote.go).
type tenantAdmin interface {
	addTenant(ctx context.Context, name string) (keyRow, error)
	tenants(ctx context.Context) ([]tenantRow, error)
	// removeTenant revokes a tenant's keys and removes it, and with
	// deleteData deletes its events (and finishes a deletion that
	// stopped part-way, for a tenant removed already).
	removeTenant(ctx context.Context, name string, deleteData bool) (engine.Purged, error)
	keys(ctx context.Context, name string) ([]keyRow, error)
	addKey(ctx context.Context, name, scope string) (keyRow, error)
	revoke(ctx context.Context, name, id string) (keyRow, error)
	rotate(ctx context.Context, name, id string, grace time.Duration) (rotation, error)
	// limits returns a tenant's limits; setLimits replaces its
	// overrides (limits.go).
	limits(ctx context.Context, name string) (api.Limits, error)
	setLimits(ctx context.Context, name string, over api.TenantLimits) (api.Limits, error)
}

// withTenants runs fn on the tenants of the server --server names, through
// its admin API, or else of the store. readOnly opens the store
// read-only, and refuses to create it.
func (g *globals) withTenants(cmd *cobra.Command, readOnly bool, fn func(ctx context.Context, ta tenantAdmin) error) (err error) {
	ctx := cmd.Context()
	r, err := g.remote(adminTokenCredential)
	if err != nil {
		return err
	}
	if r != nil {
		return fn(ctx, r)
	}
	s, err := g.openSession(ctx, cmd.ErrOrStderr(), sessionOptions{logLevel: slog.LevelWarn, existing: readOnly, readOnly: readOnly})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	defaults := s.cfg.Limits.Tenant.Or(server.DefaultTenantLimits())
	return fn(ctx, localTenants{db: s.db, reg: s.tenants, now: s.clock.Now, defaults: defaults})
}

// localTenants is the store's tenant directory as a tenantAdmin.
type localTenants struct {
	db  *engine.DB
	reg *tenant.Directory
	now func() time.Time
	// defaults are the limits of a tenant without overrides.
	defaults tenant.Limits
}

func (l localTenants) row(k tenant.Key, now time.Time) keyRow {
	return keyRow{ID: k.ID, Tenant: k.Tenant, Scope: string(k.Scope), Created: k.Created.UTC(), Expires: k.Expires.UTC(), State: string(k.State(now))}
}

func (l localTenants) addTenant(ctx context.Context, name string) (keyRow, error) {
	now := l.now()
	k, secret, err := l.reg.AddTenant(ctx, name, now)
	if err != nil {
		return keyRow{}, err
	}
	row := l.row(k, now)
	row.Secret = secret
	return row, nil
}

func (l localTenants) tenants(ctx context.Context) ([]tenantRow, error) {
	ts, err := l.reg.List(ctx)
	rows := make([]tenantRow, len(ts))
	for i, t := range ts {
		rows[i] = tenantRow{Name: t.Name, Created: t.Created.UTC()}
	}
	return rows, err
}

func (l localTenants) removeTenant(ctx context.Context, name string, deleteData bool) (engine.Purged, error) {
	err := l.reg.Remove(ctx, name, l.now())
	if !deleteData || (err != nil && !errors.Is(err, tenant.ErrNotFound)) {
		return engine.Purged{}, err
	}
	if err != nil {
		// Removed before: finish a deletion that stopped part-way.
		tables, lerr := l.db.LogicalTables(ctx, name)
		if lerr != nil || len(tables) == 0 {
			return engine.Purged{}, errors.Join(err, lerr)
		}
	}
	return l.db.DeleteTenantData(ctx, name)
}

func (l localTenants) keys(ctx context.Context, name string) ([]keyRow, error) {
	if _, err := l.reg.Get(ctx, name); err != nil {
		return nil, err
	}
	keys, err := l.reg.Keys(ctx, name)
	now := l.now()
	rows := make([]keyRow, len(keys))
	for i, k := range keys {
		rows[i] = l.row(k, now)
	}
	return rows, err
}

func (l localTenants) addKey(ctx context.Context, name, scope string) (keyRow, error) {
	sc, err := tenant.ParseScope(scope)
	if err != nil {
		return keyRow{}, usageError{err}
	}
	now := l.now()
	k, secret, err := l.reg.AddKey(ctx, name, sc, now)
	if err != nil {
		return keyRow{}, err
	}
	row := l.row(k, now)
	row.Secret = secret
	return row, nil
}

func (l localTenants) revoke(ctx context.Context, name, id string) (keyRow, error) {
	now := l.now()
	k, err := l.reg.Revoke(ctx, name, id, now)
	return l.row(k, now), err
}

func (l localTenants) rotate(ctx context.Context, name, id string, grace time.Duration) (rotation, error) {
	now := l.now()
	rot, err := l.reg.Rotate(ctx, name, id, grace, now)
	if err != nil {
		return rotation{}, err
	}
	r := rotation{Key: l.row(rot.New, now), Old: l.row(rot.Old, now)}
	r.Key.Secret = rot.Secret
	return r, nil
}

func newTenantCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tenant",
		Short: "Create, list and remove tenants, the owners of data, and their API keys",
		Long: `tenant keeps the tenants and their API keys: in the store, or with --server
(or TIMETABLE_SERVER) through a running server's admin API, with the admin
token in TIMETABLE_ADMIN_TOKEN.

A key's secret is printed once, alone on standard output, where it is made
(add, add-key, rotate): only a hash of it is stored, so it cannot be shown
again. KEY=$(timetable tenant add acme) keeps it.`,
		Args: noArgs,
		RunE: showHelp,
	}
	cmd.AddCommand(newTenantAddCmd(g), newTenantListCmd(g), newTenantRemoveCmd(g),
		newTenantKeysCmd(g), newTenantAddKeyCmd(g), newTenantRevokeCmd(g), newTenantRotateCmd(g),
		newTenantLimitsCmd(g))
	return cmd
}

func newTenantAddCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "add NAME",
		Short: "Create a tenant and print its API key, once",
		Long: `add creates a tenant and prints its new API key on standard output. Only a
hash of the key is stored: it cannot be shown again. A name is 1 to 63 of
a-z, 0-9, _ and -, starting with a letter or a digit.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withTenants(cmd, false, func(ctx context.Context, ta tenantAdmin) error {
				key, err := ta.addTenant(ctx, args[0])
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), key.Secret)
				fmt.Fprintf(cmd.ErrOrStderr(), "Created tenant %s. Keep its API key above now: only its hash is stored, so it cannot be shown again.\n", args[0])
				return nil
			})
		},
	}
}

func newTenantListCmd(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list [--format table|json]",
		Short: "List the tenants",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			return g.withTenants(cmd, true, func(ctx context.Context, ta tenantAdmin) error {
				ts, err := ta.tenants(ctx)
				if err != nil {
					return err
				}
				return writeList(cmd.OutOrStdout(), format, ts, "NAME\tCREATED", func(t tenantRow) string {
					return t.Name + "\t" + t.Created.UTC().Format(time.RFC3339)
				})
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}

func newTenantRemoveCmd(g *globals) *cobra.Command {
	var data string
	cmd := &cobra.Command{
		Use:   "remove NAME [--data keep|delete]",
		Short: "Remove a tenant, revoking every API key it has; its events stay, or are deleted",
		Long: `remove revokes every API key of a tenant (at once through the server it goes
through, within the key cache's TTL, 5s by default, on every other server
on the store), and removes the tenant. With --data keep (the default) its events
stay in the store: adding the name again makes a tenant with new keys,
which sees them. With --data delete every item its events made is deleted
too, in every physical table (events, series indexes, rollups), once no
key can write more; a deletion that stops part-way is finished by running
the command again.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if data != "keep" && data != "delete" {
				return usageErrorf("--data %q: use keep or delete", data)
			}
			return g.withTenants(cmd, false, func(ctx context.Context, ta tenantAdmin) error {
				purged, err := ta.removeTenant(ctx, args[0], data == "delete")
				if err != nil {
					return err
				}
				if data == "keep" {
					fmt.Fprintf(cmd.OutOrStdout(), "removed tenant %s: its keys are revoked, its events stay in the store\n", args[0])
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "removed tenant %s: its keys are revoked; deleted %d items of its tables %s\n", args[0], purged.Items, strings.Join(purged.Tables, ", "))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&data, "data", "keep", "keep or delete the tenant's events")
	return cmd
}

func newTenantKeysCmd(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "keys NAME [--format table|json]",
		Short: "List a tenant's API keys: id, scope, state, when made and when they end",
		Long: `keys lists a tenant's API keys, oldest first, with their ids (the first 16
hex digits of the key's hash: safe to show), scope (all, or read), state
(live; expiring: rotated out, working until it expires; revoked) and end.
The secrets are not stored, so they are not shown.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			return g.withTenants(cmd, true, func(ctx context.Context, ta tenantAdmin) error {
				keys, err := ta.keys(ctx, args[0])
				if err != nil {
					return err
				}
				return writeList(cmd.OutOrStdout(), format, keys, "ID\tSCOPE\tSTATE\tCREATED\tEXPIRES", func(k keyRow) string {
					expires := "-"
					if !k.Expires.IsZero() {
						expires = k.Expires.UTC().Format(time.RFC3339)
					}
					return strings.Join([]string{k.ID, k.Scope, k.State, k.Created.UTC().Format(time.RFC3339), expires}, "\t")
				})
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	return cmd
}

func newTenantAddKeyCmd(g *globals) *cobra.Command {
	var scope string
	cmd := &cobra.Command{
		Use:   "add-key NAME [--scope all|read]",
		Short: "Make another API key of a tenant and print it, once",
		Long: `add-key makes another API key of a tenant, of scope all (reads and writes)
or read (reads only: writes with it are refused), and prints it alone on
standard output, once.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := tenant.ParseScope(scope); err != nil {
				return usageErrorf("--scope %q: use all or read", scope)
			}
			return g.withTenants(cmd, false, func(ctx context.Context, ta tenantAdmin) error {
				key, err := ta.addKey(ctx, args[0], scope)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), key.Secret)
				fmt.Fprintf(cmd.ErrOrStderr(), "Made key %s of tenant %s, scope %s. Keep it now: it cannot be shown again.\n", key.ID, args[0], key.Scope)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&scope, "scope", string(tenant.ScopeAll), "all (read and write) or read")
	return cmd
}

func newTenantRevokeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke NAME ID",
		Short: "Revoke an API key of a tenant",
		Long: `revoke ends a key now: through a server (--server), that server refuses it at
once; every other server on the store once its key cache lets the key go
(key_cache.ttl, 5s by default). ID is the key's id, as tenant keys lists it.`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withTenants(cmd, false, func(ctx context.Context, ta tenantAdmin) error {
				k, err := ta.revoke(ctx, args[0], args[1])
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "revoked key %s of tenant %s at %s\n", k.ID, k.Tenant, k.Expires.UTC().Format(time.RFC3339))
				return nil
			})
		},
	}
}

func newTenantRotateCmd(g *globals) *cobra.Command {
	var id string
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "rotate NAME [--key ID] [--grace DUR]",
		Short: "Replace an API key of a tenant: print the new one, once; the old one ends after a grace",
		Long: `rotate makes a new key of the same scope as one of a tenant's keys, prints it
alone on standard output, once, and ends the old key after --grace (24h
unless told), so that clients can move to the new one meanwhile.

The key rotated is --key ID, or without it the tenant's one live key (a key
already rotated out, expiring, is not picked): a tenant with several live
keys needs --key, and tenant keys lists them.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if grace < 0 || cmd.Flags().Changed("grace") && grace == 0 {
				return usageErrorf("--grace %s: use a positive duration, such as 1h or 30m", grace)
			}
			name := args[0]
			return g.withTenants(cmd, false, func(ctx context.Context, ta tenantAdmin) error {
				if id == "" {
					var err error
					if id, err = liveKey(ctx, ta, name); err != nil {
						return err
					}
				}
				rot, err := ta.rotate(ctx, name, id, grace)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), rot.Key.Secret)
				fmt.Fprintf(cmd.ErrOrStderr(), "Rotated key %s of tenant %s: the new key %s above is shown once, keep it now; %s works until %s.\n",
					rot.Old.ID, name, rot.Key.ID, rot.Old.ID, rot.Old.Expires.UTC().Format(time.RFC3339))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&id, "key", "", "id of the key to rotate (default the tenant's one live key)")
	cmd.Flags().DurationVar(&grace, "grace", 0, "how long the old key keeps working (default 24h)")
	return cmd
}

// liveKey returns the id of a tenant's one live key, the key rotate
// rotates without --key.
func liveKey(ctx context.Context, ta tenantAdmin, name string) (string, error) {
	keys, err := ta.keys(ctx, name)
	if err != nil {
		return "", err
	}
	var live []string
	for _, k := range keys {
		if k.State == string(tenant.KeyLive) {
			live = append(live, k.ID)
		}
	}
	switch len(live) {
	case 0:
		return "", fmt.Errorf("tenant %s has no live key to rotate: make one with `timetable tenant add-key %s`", name, name)
	case 1:
		return live[0], nil
	}
	return "", usageErrorf("tenant %s has %d live keys (%s): name the one to rotate with --key ID", name, len(live), strings.Join(live, ", "))
}

// writeList writes list in format: as indented JSON when format is json,
// else as a table of columns, header (tab-separated) first, then row's
// line of each item.
func writeList[T any](w io.Writer, format string, list []T, header string, row func(T) string) error {
	if format == "json" {
		return writeJSONList(w, list)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, item := range list {
		fmt.Fprintln(tw, row(item))
	}
	return tw.Flush()
}

// writeJSONList writes a list as indented JSON, [] when empty.
func writeJSONList[T any](w io.Writer, list []T) error {
	if list == nil {
		list = []T{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(list)
}
