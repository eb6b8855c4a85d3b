package configcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/internal/cli/cmdio"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/extension"
)

// newPluginCmd is `tack plugin`: marketplaces, and the plugins installed
// from them, in the files Claude Code uses (<config>/plugins and the
// settings' enabledPlugins), so that both tools see the same plugins.
func newPluginCmd(stdio cmdio.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Manage plugins and the marketplaces they come from",
		Long: `Install plugins from marketplaces and turn them on and off.

A marketplace is a folder or git repository with .claude-plugin/marketplace.json
listing plugins. Installed plugins are kept under <config>/plugins (config is
$CLAUDE_CONFIG_DIR or ~/.claude); whether one is on is the enabledPlugins
entry "NAME@MARKETPLACE" of a settings file, chosen with --scope:

  user     <config>/settings.json (all your projects; the default)
  project  .claude/settings.json (shared with your team through git)
  local    .claude/settings.local.json (this project, only you)

Settings files are edited in place: only the enabledPlugins entry changes.`,
		Example: `  tack plugin marketplace add ./my-marketplace
  tack plugin install my-first-plugin@my-marketplace
  tack plugin disable my-first-plugin@my-marketplace --scope project
  tack plugin validate ./my-first-plugin`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return mcpUsage(cmd, stdio, cmdio.Usagef("unknown command %q for \"tack plugin\"", args[0]))
			}
			return cmd.Help()
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return mcpUsage(c, stdio, cmdio.Usagef("%v", err))
	})
	cmd.AddCommand(
		newMarketplaceCmd(stdio),
		newPluginInstallCmd(stdio),
		newPluginUninstallCmd(stdio),
		newPluginToggleCmd(stdio, true),
		newPluginToggleCmd(stdio, false),
		newPluginListCmd(stdio),
		newPluginValidateCmd(stdio),
	)
	return cmd
}

// pluginScopes are the settings scopes a plugin can be enabled in.
var pluginScopes = []config.Scope{config.ScopeUser, config.ScopeProject, config.ScopeLocal}

// pluginEnv is the configuration directory and project that the plugin
// commands work on.
type pluginEnv struct {
	getenv     func(string) string
	configDir  string
	projectDir string
	store      *extension.Store
}

func newPluginEnv(stdio cmdio.IO) (*pluginEnv, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	getenv := stdio.Env()
	dir := config.DefaultConfigDir(getenv)
	return &pluginEnv{getenv: getenv, configDir: dir, projectDir: wd, store: extension.NewStore(dir)}, nil
}

// settingsPath is the settings file of scope.
func (e *pluginEnv) settingsPath(scope config.Scope) string {
	switch scope {
	case config.ScopeProject:
		return filepath.Join(e.projectDir, ".claude", "settings.json")
	case config.ScopeLocal:
		return filepath.Join(e.projectDir, ".claude", "settings.local.json")
	}
	return filepath.Join(e.configDir, "settings.json")
}

// parsePluginScope reads --scope.
func parsePluginScope(s string) (config.Scope, error) {
	sc := config.Scope(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(pluginScopes, sc) {
		return "", cmdio.Usagef("invalid scope %q (want user, project or local)", s)
	}
	return sc, nil
}

func pluginScopeFlag(cmd *cobra.Command) *string {
	var s string
	cmd.Flags().StringVarP(&s, "scope", "s", "user", "settings scope: user, project or local")
	return &s
}

// settings reads the merged settings of this project; a broken settings
// file is reported as a warning and read as none.
func (e *pluginEnv) settings(stdio cmdio.IO) *config.Merged {
	m, err := config.Load(config.LoadOptions{ConfigDir: e.configDir, ProjectDir: e.projectDir, Cwd: e.projectDir})
	if err != nil {
		fmt.Fprintf(stdio.Err, "tack: warning: settings not read: %v\n", err)
		return nil
	}
	return m
}

// installedID finds the installation arg names: "name@marketplace", or a
// bare name that exactly one installed plugin has. ok is false when it is
// not installed; id is then arg as written (completed when it could be).
func (e *pluginEnv) installedID(arg string) (id string, rec extension.InstalledPlugin, ok bool, err error) {
	installed, err := e.store.Installed()
	if err != nil {
		return "", rec, false, err
	}
	if strings.Contains(arg, "@") {
		if _, _, err := extension.SplitID(arg); err != nil {
			return "", rec, false, cmdio.Usagef("%v", err)
		}
		rec, ok = installed[arg]
		return arg, rec, ok, nil
	}
	var found []string
	for id := range installed {
		if name, _, _ := extension.SplitID(id); name == arg {
			found = append(found, id)
		}
	}
	slices.Sort(found)
	switch len(found) {
	case 0:
		return arg, rec, false, nil
	case 1:
		return found[0], installed[found[0]], true, nil
	}
	return "", rec, false, cmdio.Usagef("plugin %q is installed from several marketplaces: name one (%s)", arg, strings.Join(found, ", "))
}

func notInstalled(id string) error {
	if !strings.Contains(id, "@") {
		return fmt.Errorf("plugin %q is not installed (see tack plugin list; install with tack plugin install %s@MARKETPLACE)", id, id)
	}
	return fmt.Errorf("plugin %s is not installed (tack plugin install %s)", id, id)
}

func newMarketplaceCmd(stdio cmdio.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "marketplace",
		Short: "Manage the marketplaces plugins are installed from",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return mcpUsage(cmd, stdio, cmdio.Usagef("unknown command %q for \"tack plugin marketplace\"", args[0]))
			}
			return cmd.Help()
		},
	}
	add := &cobra.Command{
		Use:   "add SOURCE",
		Short: "Add a marketplace: a folder, a git URL or path, or a GitHub owner/repo",
		Long: `Add a marketplace, named by its .claude-plugin/marketplace.json:

  ./folder                  a local folder, read where it is
  https://host/repo.git     a git repository (also ssh://, git@host:path,
  file:///path/repo         file:// and a local path ending in .git), cloned
  owner/repo                a GitHub repository

A git source may end in #REF to pick a branch or tag.`,
		Args: needArgs(stdio, 1, "the marketplace source"),
	}
	add.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		e, err := newPluginEnv(stdio)
		if err != nil {
			return err
		}
		src, err := extension.ParseMarketplaceSource(args[0], e.projectDir)
		if err != nil {
			return err
		}
		km, cat, err := e.store.AddMarketplace(cmd.Context(), src)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdio.Out, "Added marketplace %s from %s (%s)\n", km.Name, km.Source, countOf(len(cat.Plugins), "plugin"))
		for _, p := range sortedCatalog(cat) {
			line := "  " + p.Name
			if p.Version != "" {
				line += " " + p.Version
			}
			if p.Description != "" {
				line += " — " + cmdio.OneLine(p.Description, 100)
			}
			fmt.Fprintln(stdio.Out, line)
		}
		return nil
	})
	list := &cobra.Command{
		Use:   "list",
		Short: "List the marketplaces added",
		Args:  cobra.NoArgs,
	}
	list.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		e, err := newPluginEnv(stdio)
		if err != nil {
			return err
		}
		ms, err := e.store.Marketplaces()
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			fmt.Fprintln(stdio.Out, "No marketplaces. Add one with: tack plugin marketplace add SOURCE")
			return nil
		}
		tw := tabwriter.NewWriter(stdio.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSOURCE\tPLUGINS\tLOCATION")
		for _, m := range ms {
			count := "?"
			if cat, err := extension.ReadCatalog(m.InstallLocation); err != nil {
				fmt.Fprintf(stdio.Err, "tack: warning: marketplace %s: %v\n", m.Name, err)
			} else {
				count = fmt.Sprint(len(cat.Plugins))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Source, count, m.InstallLocation)
		}
		return tw.Flush()
	})
	remove := &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Forget a marketplace (plugins installed from it stay installed)",
		Args:    needArgs(stdio, 1, "the marketplace name"),
	}
	remove.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		e, err := newPluginEnv(stdio)
		if err != nil {
			return err
		}
		name := args[0]
		if err := e.store.RemoveMarketplace(name); err != nil {
			return err
		}
		fmt.Fprintf(stdio.Out, "Removed marketplace %s\n", name)
		installed, err := e.store.Installed()
		if err != nil {
			return err
		}
		var left []string
		for id := range installed {
			if _, market, _ := extension.SplitID(id); market == name {
				left = append(left, id)
			}
		}
		if len(left) > 0 {
			slices.Sort(left)
			fmt.Fprintf(stdio.Err, "tack: note: still installed from it: %s (remove with tack plugin uninstall ID)\n", strings.Join(left, ", "))
		}
		return nil
	})
	cmd.AddCommand(add, list, remove)
	return cmd
}

func sortedCatalog(cat *extension.Catalog) []extension.CatalogPlugin {
	ps := slices.Clone(cat.Plugins)
	slices.SortStableFunc(ps, func(a, b extension.CatalogPlugin) int { return strings.Compare(a.Name, b.Name) })
	return ps
}

func newPluginInstallCmd(stdio cmdio.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "install NAME@MARKETPLACE",
		Aliases: []string{"i"},
		Short:   "Install a plugin from a marketplace and enable it",
		Long: `Install a plugin from a marketplace added with tack plugin marketplace add,
and enable it in the settings of --scope. NAME alone is enough when exactly one
marketplace lists it.`,
		Args: needArgs(stdio, 1, "the plugin (NAME@MARKETPLACE)"),
	}
	scope := pluginScopeFlag(cmd)
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		sc, err := parsePluginScope(*scope)
		if err != nil {
			return err
		}
		e, err := newPluginEnv(stdio)
		if err != nil {
			return err
		}
		id, err := e.store.ResolveID(args[0])
		if err != nil {
			return err
		}
		rec, p, err := e.store.Install(cmd.Context(), id)
		if err != nil {
			return err
		}
		path := e.settingsPath(sc)
		if err := extension.SetPluginEnabled(path, id, true); err != nil {
			return fmt.Errorf("installed %s but could not enable it: %w", id, err)
		}
		fmt.Fprintf(stdio.Out, "Installed %s %s in %s\n", id, rec.Version, rec.InstallPath)
		if s := pluginSummary(p); s != "" {
			fmt.Fprintf(stdio.Out, "  %s\n", s)
		}
		fmt.Fprintf(stdio.Out, "Enabled in %s (%s scope)\n", path, sc)
		return nil
	})
	return cmd
}

func newPluginUninstallCmd(stdio cmdio.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "uninstall NAME@MARKETPLACE",
		Aliases: []string{"remove", "rm"},
		Short:   "Uninstall a plugin and remove it from the settings of --scope",
		Args:    needArgs(stdio, 1, "the plugin (NAME@MARKETPLACE)"),
	}
	scope := pluginScopeFlag(cmd)
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		sc, err := parsePluginScope(*scope)
		if err != nil {
			return err
		}
		e, err := newPluginEnv(stdio)
		if err != nil {
			return err
		}
		id, _, installed, err := e.installedID(args[0])
		if err != nil {
			return err
		}
		path := e.settingsPath(sc)
		removed := false
		if strings.Contains(id, "@") {
			if removed, err = extension.RemovePluginSetting(path, id); err != nil {
				return err
			}
		}
		if !installed {
			if removed {
				fmt.Fprintf(stdio.Out, "Removed %s from enabledPlugins in %s (it was not installed)\n", id, path)
				return nil
			}
			return notInstalled(id)
		}
		if err := e.store.Uninstall(id); err != nil {
			return err
		}
		fmt.Fprintf(stdio.Out, "Uninstalled %s\n", id)
		if removed {
			fmt.Fprintf(stdio.Out, "Removed it from enabledPlugins in %s (%s scope)\n", path, sc)
		}
		// The other settings files of this project may still name it.
		for _, other := range pluginScopes {
			if other == sc {
				continue
			}
			if on, set := readEnabled(e.settingsPath(other), id); set && on {
				fmt.Fprintf(stdio.Err, "tack: note: %s is still enabled in %s (tack plugin uninstall %s --scope %s)\n", id, e.settingsPath(other), id, other)
			}
		}
		return nil
	})
	return cmd
}

// readEnabled reads enabledPlugins[id] of one settings file; set is false
// when the file (or the entry) is missing or unreadable.
func readEnabled(path, id string) (on, set bool) {
	src, err := os.ReadFile(path)
	if err != nil {
		return false, false
	}
	var s struct {
		EnabledPlugins map[string]bool `json:"enabledPlugins"`
	}
	if json.Unmarshal(src, &s) != nil {
		return false, false
	}
	on, set = s.EnabledPlugins[id]
	return on, set
}

func newPluginToggleCmd(stdio cmdio.IO, enable bool) *cobra.Command {
	verb, short := "enable", "Enable an installed plugin in the settings of --scope"
	if !enable {
		verb, short = "disable", "Disable a plugin in the settings of --scope"
	}
	cmd := &cobra.Command{
		Use:   verb + " NAME@MARKETPLACE",
		Short: short,
		Args:  needArgs(stdio, 1, "the plugin (NAME@MARKETPLACE)"),
	}
	scope := pluginScopeFlag(cmd)
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		sc, err := parsePluginScope(*scope)
		if err != nil {
			return err
		}
		e, err := newPluginEnv(stdio)
		if err != nil {
			return err
		}
		id, _, installed, err := e.installedID(args[0])
		if err != nil {
			return err
		}
		if !installed {
			return notInstalled(id)
		}
		path := e.settingsPath(sc)
		if err := extension.SetPluginEnabled(path, id, enable); err != nil {
			return err
		}
		fmt.Fprintf(stdio.Out, "%sd %s in %s (%s scope)\n", strings.ToUpper(verb[:1])+verb[1:], id, path, sc)
		// A higher scope's entry wins over this one: say so.
		if m := e.settings(stdio); m != nil {
			if eff, ok := m.EnabledPlugins[id]; ok && eff != enable {
				if src, ok := m.Origin("enabledPlugins." + id); ok {
					fmt.Fprintf(stdio.Err, "tack: note: %s (%s scope) sets it to %t, which wins\n", src.Path, src.Scope, eff)
				}
			}
		}
		return nil
	})
	return cmd
}

func newPluginListCmd(stdio cmdio.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the installed plugins and whether each is enabled here",
		Long: `List the installed plugins: version, the settings scope whose enabledPlugins
entry is in effect in this project, whether the plugin is enabled, and where it
is installed. Plugins the settings enable but that are not installed are listed
too, as "(not installed)".`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		e, err := newPluginEnv(stdio)
		if err != nil {
			return err
		}
		installed, err := e.store.Installed()
		if err != nil {
			return err
		}
		m := e.settings(stdio)
		ids := make([]string, 0, len(installed))
		for id := range installed {
			ids = append(ids, id)
		}
		if m != nil {
			for id, on := range m.EnabledPlugins {
				if _, ok := installed[id]; !ok && on {
					ids = append(ids, id)
				}
			}
		}
		if len(ids) == 0 {
			fmt.Fprintln(stdio.Out, "No plugins installed. Install one with: tack plugin install NAME@MARKETPLACE")
			return nil
		}
		slices.Sort(ids)
		tw := tabwriter.NewWriter(stdio.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tVERSION\tSCOPE\tENABLED\tPATH")
		for _, id := range ids {
			version, path := "-", "(not installed)"
			if rec, ok := installed[id]; ok {
				version, path = cmdio.Dash(rec.Version), rec.InstallPath
			}
			scope, enabled := "-", "no"
			if m != nil {
				if on, ok := m.EnabledPlugins[id]; ok {
					if on {
						enabled = "yes"
					}
					if src, ok := m.Origin("enabledPlugins." + id); ok {
						scope = string(src.Scope)
					}
				}
			} else {
				enabled = "?"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", id, version, scope, enabled, path)
		}
		return tw.Flush()
	})
	return cmd
}

func newPluginValidateCmd(stdio cmdio.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate DIR",
		Short: "Check a plugin (or marketplace) folder as tack would load it",
		Long: `Read the plugin in DIR as tack would load it and print every problem as
FILE:LINE:COL: message. When DIR is also a marketplace, its catalogue is checked
too. Exits 1 when a problem would keep something from loading; warnings alone
exit 0.`,
		Args: needArgs(stdio, 1, "the plugin folder"),
	}
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		dir := args[0]
		if !filepath.IsAbs(dir) {
			wd, err := os.Getwd()
			if err != nil {
				return fmt.Errorf("working directory: %w", err)
			}
			dir = filepath.Join(wd, dir)
		}
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("validate: %s does not exist", dir)
		case err != nil:
			return fmt.Errorf("validate: %w", err)
		case !fi.IsDir():
			return fmt.Errorf("validate: %s is not a folder", dir)
		}
		p, probs := extension.ValidatePlugin(dir)
		errs, warns := 0, 0
		for _, pr := range probs {
			if pr.Warning {
				warns++
			} else {
				errs++
			}
			fmt.Fprintln(stdio.Out, pr.Error())
		}
		if cat, err := extension.ReadCatalog(dir); err == nil {
			fmt.Fprintf(stdio.Out, "marketplace %s: %s\n", cat.Name, countOf(len(cat.Plugins), "plugin"))
		}
		if p != nil {
			line := "plugin " + p.Name
			if p.Version != "" {
				line += " " + p.Version
			}
			if s := pluginSummary(p); s != "" {
				line += ": " + s
			}
			fmt.Fprintln(stdio.Out, line)
		}
		if errs > 0 {
			fmt.Fprintf(stdio.Out, "Validation failed: %s, %s\n", countOf(errs, "error"), countOf(warns, "warning"))
			return &cmdio.ExitError{Code: 1}
		}
		if warns > 0 {
			fmt.Fprintf(stdio.Out, "Validation passed with %s\n", countOf(warns, "warning"))
		} else {
			fmt.Fprintln(stdio.Out, "Validation passed")
		}
		return nil
	})
	return cmd
}

// pluginSummary counts what a plugin brings: "2 agents, 1 skill, hooks".
func pluginSummary(p *extension.Plugin) string {
	if p == nil {
		return ""
	}
	var parts []string
	if n := len(p.Agents); n > 0 {
		parts = append(parts, countOf(n, "agent"))
	}
	skills, commands := 0, 0
	for _, s := range p.Skills {
		if s.Kind == extension.KindCommand {
			commands++
		} else {
			skills++
		}
	}
	if skills > 0 {
		parts = append(parts, countOf(skills, "skill"))
	}
	if commands > 0 {
		parts = append(parts, countOf(commands, "command"))
	}
	if len(p.Hooks) > 0 {
		parts = append(parts, "hooks")
	}
	if n := len(p.MCPServers); n > 0 {
		parts = append(parts, countOf(n, "MCP server"))
	}
	if p.BinDir != "" {
		parts = append(parts, "bin/")
	}
	return strings.Join(parts, ", ")
}

// countOf is "1 word" or "N words".
func countOf(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// needArgs requires n arguments and names what is missing.
func needArgs(stdio cmdio.IO, n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < n:
			return mcpUsage(cmd, stdio, cmdio.Usagef("missing %s", what))
		case len(args) > n:
			return mcpUsage(cmd, stdio, cmdio.Usagef("unexpected argument %q", args[n]))
		}
		return nil
	}
}
