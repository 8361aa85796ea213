// The recipe as Apollo iOS 2.x shapes it: an HTTP interceptor adds the token,
// a GraphQL interceptor renews it on a 401 or an in-body UNAUTHENTICATED and
// throws RequestChain.Retry (Apollo2DriverSupport), over a token manager
// that renews once per caller: every refused operation sends its own
// refresh, and nothing checks whether it carried a token already replaced.
import Apollo2DriverSupport

struct RenewingTokenManager: TokenManager {
    let tokens: TokenStore

    func renew(after token: String) async throws {
        try await tokens.grant(["grant_type": "refresh_token", "refresh_token": tokens.refreshToken])
    }

    func signedIn() async {}
}

await Driver.run(name: "apollo2-token-interceptor", version: "2", profiles: ["oauth2"], capabilities: ["graphql"]) { hello in
    ApolloDriver(hello: hello, manager: RenewingTokenManager(tokens: TokenStore(hello: hello)))
}
