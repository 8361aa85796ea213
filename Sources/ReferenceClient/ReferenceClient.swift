public import DriverProtocol
import AsyncHTTPClient
public import DriverKit
import Foundation
import NIOCore
import NIOSSL
import NIOHTTP1
import Synchronization

/// The classic token-refresh bugs, one switch each. The reference client is
/// correct with none set; the conformance suite must catch every one of them.
public enum ClientFault: String, Sendable, CaseIterable {
    case refreshPer401 = "refresh-per-401"
    case retryForever = "retry-forever"
    case keepFirstRefreshToken = "keep-first-refresh-token"
    case refreshOn403 = "refresh-on-403"
    case dropCallHeaderOnRetry = "drop-call-header-on-retry"
    case dropBodyOnRetry = "drop-body-on-retry"
    case noBearerPrefix = "no-bearer-prefix"
    case ignoreRotatedHeader = "ignore-rotated-header"
    case olderHeaderWins = "older-header-wins"
    case recursiveRefresh = "recursive-refresh"
    case noLate401Check = "no-late-401-check"
    case sendWithoutTokenDuringRefresh = "send-without-token-during-refresh"
    case ignoreRetryAfter = "ignore-retry-after"
    case refreshOnAny401 = "refresh-on-any-401"
    case bearerToAnyHost = "bearer-to-any-host"
    /// Treats a 401 as "expired" only when its body says so (Alamofire's retrier behind `validate()`).
    case needsErrorBody = "needs-error-body"
    /// Never refreshes ahead of expiry: every expiry costs a 401 first.
    case noProactiveRefresh = "no-proactive-refresh"
    /// Refreshes only when its own clock says the token expired, never on a 401 (golang.org/x/oauth2).
    case refreshOnlyByExpiry = "refresh-only-by-expiry"
    /// Drops the refresh token when a refresh answer has none, instead of keeping it.
    case forgetRefreshTokenWhenAbsent = "forget-refresh-token-when-absent"
    /// Signs the user out on any failed refresh: a 503, a 429 or a lost connection too.
    case logoutOnAnyRefreshError = "logout-on-any-refresh-error"
    /// Reads only the first challenge of `WWW-Authenticate`.
    case firstChallengeOnly = "first-challenge-only"
    /// Sends each waiting call once more with the dead token after the refresh was refused.
    case resendAfterRefusedRefresh = "resend-after-refused-refresh"
    /// Judges expiry by the JWT's `exp` against the device's clock instead of
    /// `expires_in` counted from receipt: a server clock behind the device's
    /// makes every token look expired.
    case trustJWTExp = "trust-jwt-exp"
    /// Forgets its tokens on sign-out without ending the login at the
    /// server's sign-out endpoint: a copied refresh token keeps working.
    case signOutLocallyOnly = "sign-out-locally-only"
    /// Adopts the answer of a refresh that was still out when the user signed out.
    case lateRefreshRevivesSession = "late-refresh-revives-session"
    /// A new session's calls join the refresh the old session left in flight,
    /// and take its answer for theirs: the refresh in flight not keyed by the
    /// refresh token it was started for (case 9.3's report, docs/cases.md).
    case joinOldSessionRefresh = "join-old-session-refresh"
    /// A sign-in keeps the tokens cached before it, so the calls after it
    /// carry the earlier login's (Ktor's `BearerAuthProvider`, whose
    /// `loadTokens` result survives a sign-in until `clearToken()`).
    case signInKeepsCachedTokens = "sign-in-keeps-cached-tokens"
    /// Runs the refresh inside the call that started it: cancelling that
    /// call cancels the refresh request after the server rotated the tokens,
    /// so the next refresh spends a dead refresh token (KTOR-8285).
    case cancelAbortsRefresh = "cancel-aborts-refresh"
    /// A cancelled call waiting for the refresh empties the single-flight
    /// slot: the next call starts a second refresh with the refresh token
    /// the first is spending (ReviewStage/luke#570).
    case cancelClearsSingleFlight = "cancel-clears-single-flight"
    /// Hands the one-shot body stream the first attempt already read to the retry (it sends nothing).
    case reuseConsumedStream = "reuse-consumed-stream"
    /// Looks only at the HTTP status: GraphQL's `UNAUTHENTICATED` in a 200
    /// body never starts a refresh (apollographql/apollo-ios#627).
    case statusOnlyGraphQL = "status-only-graphql"
    /// Refreshes and retries on any GraphQL error, `BAD_USER_INPUT` and `NOT_FOUND` too.
    case refreshOnAnyGraphQLError = "refresh-on-any-graphql-error"
    /// Checks a refreshed id token's signature only: whatever `sub` and
    /// `iss` it names are taken (OIDC Core 12.2 asks for the sign-in's).
    case acceptAnySubOnRefresh = "accept-any-sub-on-refresh"
    /// Fetches the JWKS once: an id token signed by a rotated-in key is refused.
    case neverRefetchJWKS = "never-refetch-jwks"
    /// Does not compare the id token's `nonce` with the one it sent.
    case ignoreNonce = "ignore-nonce"
    /// Each instance of the app (its extension, a widget) reads the shared
    /// token store once and keeps its own copy: it never sees the tokens
    /// another instance got, and refreshes on its own with a refresh token
    /// that instance already spent (opencloud-eu/ios#43, auth0/react-native-auth0#1374).
    case instancesKeepOwnCopy = "instances-keep-own-copy"
    /// Refreshes on a 401 but hands that 401 to the application: the call is
    /// not sent again with the new token, and a refused refresh is not told
    /// as a sign-in either (a Moya plugin that refreshes in `didReceive`,
    /// drivers/swift-moya-rx).
    case noRetryAfterRefresh = "no-retry-after-refresh"
    /// When the network returns after a call failed to reach the server, it
    /// refreshes on its own (a connectivity listener, an auto-refresh timer
    /// resuming), beside the refresh the calls' 401s share: the refresh
    /// token is spent twice (supabase-community/supabase-kt#1060).
    case refreshOnReconnect = "refresh-on-reconnect"
    /// A refresh whose answer never came (the connection dropped) is tried
    /// again only with the next call, not at once: on a server whose grace
    /// window for the rotated token is short, that retry comes too late (case 3.5).
    case retryLostRefreshLater = "retry-lost-refresh-later"
}

/// When the client refreshes by its own clock, before any 401. Not a fault:
/// every mode is correct, and the suite must give the same verdicts for all
/// of them (except 6.1, which asks for refreshing ahead of expiry).
public enum ProactiveRefresh: String, Sendable, CaseIterable {
    /// Ahead of expiry: 10 s early, a quarter of the lifetime for short tokens (the default).
    case early
    /// When its own clock says the token has expired, with no margin (Alamofire's
    /// AuthenticationInterceptor with a credential whose `requiresRefresh` is `expiration <= now`).
    case atExpiry = "at-expiry"
    /// Never: only the server's 401 starts a refresh.
    case off
}

/// An HTTP answer, reduced to what refresh logic looks at.
struct Answer: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: String

    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] }

    /// The body as a JSON value (a declared dialect's answers are read by template paths).
    var jsonValue: JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: Data(body.utf8)) }

    /// The `extensions.code` of each GraphQL error in the body.
    var graphQLErrorCodes: [String] {
        guard let errors = json?["errors"] as? [[String: Any]] else { return [] }
        return errors.map { (($0["extensions"] as? [String: Any])?["code"] as? String) ?? "" }
    }

    /// A GraphQL answer (2xx) whose token was refused in the body.
    var graphQLUnauthenticated: Bool { (200..<300).contains(status) && graphQLErrorCodes.contains("UNAUTHENTICATED") }

    /// A GraphQL answer with errors and no data: the application got an error.
    var graphQLFailed: Bool {
        guard let object = json, object["errors"] is [Any] else { return false }
        return object["data"] == nil || object["data"] is NSNull
    }
}

/// A token-refresh client done right, for every authmock dialect: one
/// refresh for any number of concurrent 401s, a late 401 retried without a
/// second refresh, one retry per call, `reauth_required` once the refresh is
/// refused, rotated refresh tokens kept, header-rotated access tokens adopted
/// (never an older one), the body replayed byte for byte, and the bearer
/// token sent only to the server it belongs to. Built on AsyncHTTPClient:
/// URLSession on Linux has no per-host connection limit control and its
/// async API arrived late, while AsyncHTTPClient is what server-side Swift uses.
public final class ReferenceClient: Sendable {
    public let baseURL: String
    /// The dialect's description (`hello`'s `dialect`): the client signs in,
    /// refreshes and reads answers where it says. nil: OAuth 2.0 (RFC 6749),
    /// the one dialect with no description, which the client knows by itself.
    let dialect: DialectDescription?
    let clientID: String
    let clientSecret: String
    let faults: Set<ClientFault>
    let proactive: ProactiveRefresh
    let http: HTTPClient
    /// The token store (the app's keychain) every instance of the client
    /// shares, and through it its one refresh at a time.
    let sharedStore: TokenStore
    /// The other instances' own copies of the store (`instances-keep-own-copy` only).
    let instanceCopies = Mutex<[Int: TokenStore]>([:])
    /// The store the running call's instance reads: the shared one unless a
    /// call of another instance set its copy (`request(instance:)`).
    @TaskLocal static var instanceStore: TokenStore?
    var store: TokenStore { Self.instanceStore ?? sharedStore }
    /// A call failed to reach the server and none has reached it since
    /// (`refresh-on-reconnect` only): the app thinks itself offline.
    private let offline = Mutex(false)
    func wentOffline() { offline.withLock { $0 = true } }
    /// Whether the app was offline until now; it is online from here.
    func cameBackOnline() -> Bool {
        offline.withLock { was in
            defer { was = false }
            return was
        }
    }
    /// The OpenID Connect sign-in, when the app signed in that way.
    let openID: OpenIDSession
    /// Longest Retry-After the client honours.
    static let retryAfterCap = 10.0

    /// `maxConnectionsPerHost`: the connection pool's size (nil: 256, in
    /// effect unlimited); 6 is URLSession's HTTPMaximumConnectionsPerHost, so
    /// calls beyond it queue for a connection as they do in an iOS app.
    public init(
        baseURL: String, clientID: String, clientSecret: String, faults: Set<ClientFault> = [],
        maxConnectionsPerHost: Int? = nil, proactive: ProactiveRefresh = .early, dialect: DialectDescription? = nil,
        caCertificate: String? = nil
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.dialect = dialect
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.faults = faults
        self.proactive = faults.contains(.noProactiveRefresh) && !faults.contains(.refreshOnlyByExpiry) ? .off : proactive
        sharedStore = Self.makeStore(faults: faults, proactive: proactive)
        openID = OpenIDSession(clientID: clientID, faults: faults)
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(30))
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: maxConnectionsPerHost ?? 256)
        // A case served over HTTPS (`authmock run --tls`): its certificate is the only root trusted.
        if let caCertificate {
            do {
                let roots = try NIOSSLCertificate.fromPEMBytes(Array(caCertificate.utf8))
                guard !roots.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.trustRoots = .certificates(roots)
                configuration.tlsConfiguration = tls
            } catch {
                // Said, not dropped: every HTTPS call will then fail certificate checks, and this is why.
                Driver.log("hello's ca_certificate is no PEM certificate, so no extra root is trusted: \(error)")
            }
        }
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    static func makeStore(faults: Set<ClientFault>, proactive: ProactiveRefresh) -> TokenStore {
        TokenStore(
            margin: proactive == .atExpiry ? .zero : nil, expiryFromJWT: faults.contains(.trustJWTExp),
            joinOldSessionRefresh: faults.contains(.joinOldSessionRefresh),
            cancelEffect: faults.contains(.cancelAbortsRefresh) ? .abortRefresh : faults.contains(.cancelClearsSingleFlight) ? .clearSlot : .none)
    }

    /// The store instance `instance` of the app reads. A correct app: the
    /// shared one, whatever the instance, so one refresh serves them all and
    /// each sees the tokens another got. The broken variant: instance 2 and
    /// on copy it at their first call and keep that copy.
    func store(forInstance instance: Int) async -> TokenStore {
        guard instance > 1, faults.contains(.instancesKeepOwnCopy) else { return sharedStore }
        if let copy = instanceCopies.withLock({ $0[instance] }) { return copy }
        let copy = Self.makeStore(faults: faults, proactive: proactive)
        await copy.start(from: await sharedStore.copy)
        return instanceCopies.withLock { copies in
            if let first = copies[instance] { return first }
            copies[instance] = copy
            return copy
        }
    }

    /// The dialect the client speaks by name (hello's `profiles`); every
    /// other comes as a description (the `dialect` capability).
    public static let profiles = [DialectName.oauth2]

    /// Why the client cannot speak the case server's dialect from `hello`, or nil.
    public static func cannotSpeak(_ hello: Hello) -> String? {
        guard hello.dialect == nil, hello.profile != DialectName.oauth2 else { return nil }
        return
            "the dialect \(hello.profile) came without its description in hello; this client speaks oauth2 by name and any other dialect from its description"
    }

    /// Closes the connection pool; the client is not used after this.
    public func close() async {
        try? await http.shutdown()
    }

    // MARK: HTTP

    func send(
        _ method: String, _ pathOrURL: String, headers: [(String, String)] = [], body: String? = nil, stream: Bool = false
    ) async throws -> Answer {
        // A cancelled call sends nothing. AsyncHTTPClient cancels a request
        // whose task was already cancelled only asynchronously, so under load
        // a fast answer could win and the cancelled call end ok (9.5).
        try Task.checkCancellation()
        let url = pathOrURL.hasPrefix("http") ? pathOrURL : baseURL + pathOrURL
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body, stream {
            // A one-shot stream of unknown length (chunked), as an app's upload hands it over.
            request.body = .stream(
                AsyncStream {
                    $0.yield(ByteBuffer(string: body)); $0.finish()
                }, length: .unknown)
        } else if let body {
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 16 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: buffer))
    }

    func json(_ object: [String: String]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }

    var basic: (String, String) {
        ("Authorization", "Basic " + Data("\(clientID):\(clientSecret)".utf8).base64EncodedString())
    }

    static func form(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.1)" }.joined(separator: "&")
    }

    /// Token fields from a sign-in or refresh answer, wherever the dialect puts them.
    static func tokens(_ answer: Answer) -> (access: String?, refresh: String?) {
        guard var object = answer.json else { return (nil, nil) }
        if let data = object["data"] as? [String: Any] { object = data }
        let access = object["access_token"] as? String ?? object["accessToken"] as? String
        let refresh = object["refresh_token"] as? String ?? object["refreshToken"] as? String
        return (access, refresh)
    }

    /// The token lifetime an answer announces, in seconds.
    static func lifetime(_ answer: Answer) -> Double? {
        guard var object = answer.json else { return nil }
        if let data = object["data"] as? [String: Any] { object = data }
        let value = object["expires_in"] ?? object["expiresIn"] ?? object["accessTokenExpiresIn"]
        return (value as? Int).map(Double.init) ?? (value as? Double)
    }
}
