// Command temporal-server-authz is the Temporal server of the production topology with two additions, chosen in
// the node's config (global.authorization), because Temporal's own binary can do neither:
//
//   - claimMapper "certificate-subject": a caller's role comes from the organizational unit (OU) of the client
//     certificate it presented, which mutual TLS has already checked against the cluster's CA:
//     "temporal-cluster" (the nodes themselves) and "operators" are admins, "booking-callers" are writers,
//     anyone else has no role and is refused.
//   - authorizer "certificate-roles": Temporal's default rule (readers read, writers write), except that
//     terminating, resetting or deleting a workflow, and batch operations, need an admin: a booking caller may
//     start, query, signal and update bookings, and only an operator may end one by force.
//
// Without those two names in the config it behaves exactly as temporal-server (e.g. the test clusters without TLS).
// Usage, as temporal-server's: temporal-server-authz --root DIR --config SUBDIR --env NAME [--allow-no-auth] start
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the topology's database
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/temporal"
)

const (
	claimMapperName = "certificate-subject"
	authorizerName  = "certificate-roles"
)

// rolesByUnit: the certificate's OU → its role on every namespace.
var rolesByUnit = map[string]authorization.Role{
	"temporal-cluster": authorization.RoleAdmin,
	"operators":        authorization.RoleAdmin,
	"booking-callers":  authorization.RoleWriter,
}

// adminOnly: workflow-service calls that end or rewrite a workflow by force, refused to writers.
var adminOnly = map[string]bool{
	"/temporal.api.workflowservice.v1.WorkflowService/TerminateWorkflowExecution": true,
	"/temporal.api.workflowservice.v1.WorkflowService/ResetWorkflowExecution":     true,
	"/temporal.api.workflowservice.v1.WorkflowService/DeleteWorkflowExecution":    true,
	"/temporal.api.workflowservice.v1.WorkflowService/StartBatchOperation":        true,
	"/temporal.api.workflowservice.v1.WorkflowService/StopBatchOperation":         true,
}

type subjectClaimMapper struct{}

func (subjectClaimMapper) GetClaims(info *authorization.AuthInfo) (*authorization.Claims, error) {
	if info == nil || info.TLSSubject == nil {
		return nil, nil // no certificate: no role
	}
	var role authorization.Role
	for _, unit := range info.TLSSubject.OrganizationalUnit {
		role |= rolesByUnit[unit]
	}
	if role == authorization.RoleUndefined {
		return nil, nil
	}
	return &authorization.Claims{Subject: info.TLSSubject.CommonName, System: role}, nil
}

type roleAuthorizer struct{ base authorization.Authorizer }

func (a roleAuthorizer) Authorize(ctx context.Context, claims *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	if adminOnly[target.APIName] {
		if claims == nil || (claims.System|claims.Namespaces[target.Namespace])&authorization.RoleAdmin == 0 {
			return authorization.Result{Decision: authorization.DecisionDeny, Reason: "needs an operator certificate"}, nil
		}
	}
	return a.base.Authorize(ctx, claims, target)
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string) error {
	flags := flag.NewFlagSet("temporal-server-authz", flag.ContinueOnError)
	root := flags.String("root", ".", "root directory")
	configDir := flags.String("config", "config", "config directory, relative to --root")
	env := flags.String("env", "development", "config file name, without .yaml")
	zone := flags.String("zone", "", "availability zone")
	flags.Bool("allow-no-auth", false, "accepted for temporal-server's command line")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if rest := flags.Args(); len(rest) != 1 || rest[0] != "start" {
		return fmt.Errorf("usage: temporal-server-authz --root DIR --config SUBDIR --env NAME start (got %v)", rest)
	}

	cfg, err := config.LoadConfig(*env, filepath.Join(*root, *configDir), *zone)
	if err != nil {
		return fmt.Errorf("unable to load configuration: %w", err)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))

	dynamicConfigClient := dynamicconfig.NewNoopClient()
	if cfg.DynamicConfigClient != nil {
		fileClient, err := dynamicconfig.NewFileBasedClient(cfg.DynamicConfigClient, logger, temporal.InterruptCh())
		if err != nil {
			return fmt.Errorf("unable to create dynamic config client: %w", err)
		}
		dynamicConfigClient = fileClient
	}

	auth := cfg.Global.Authorization
	var authorizer authorization.Authorizer
	if auth.Authorizer == authorizerName {
		authorizer = roleAuthorizer{base: authorization.NewDefaultAuthorizer()}
	} else if authorizer, err = authorization.GetAuthorizerFromConfig(&auth); err != nil {
		return fmt.Errorf("unable to instantiate authorizer: %w", err)
	}
	var claimMapper authorization.ClaimMapper
	if auth.ClaimMapper == claimMapperName {
		claimMapper = subjectClaimMapper{}
	} else if claimMapper, err = authorization.GetClaimMapperFromConfig(&auth, logger); err != nil {
		return fmt.Errorf("unable to instantiate claim mapper: %w", err)
	}
	audienceMapper, err := authorization.GetAudienceMapperFromConfig(&auth)
	if err != nil {
		return fmt.Errorf("unable to instantiate audience mapper: %w", err)
	}

	server, err := temporal.NewServer(
		temporal.ForServices(temporal.DefaultServices), // all four in one process, as temporal-server by default
		temporal.WithConfig(cfg),
		temporal.WithDynamicConfigClient(dynamicConfigClient),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithAudienceGetter(func(*config.Config) authorization.JWTAudienceMapper { return audienceMapper }),
	)
	if err != nil {
		return fmt.Errorf("unable to create server: %w", err)
	}
	return server.Start()
}
