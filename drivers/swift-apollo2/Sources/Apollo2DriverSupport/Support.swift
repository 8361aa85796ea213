@_exported import Apollo
@_exported import ApolloAPI
@_exported import DriverKit
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A token endpoint answer (RFC 6749 section 5.1).
public struct TokenResponse: Decodable, Sendable {
    public var access_token: String
    public var refresh_token: String?
    public var expires_in: Double?
}

/// The token endpoint refused the grant (400 or 401): the refresh token is
/// dead and the app shows its sign-in screen.
public struct RefreshRefused: Error {
    public let status: Int
}

/// The token endpoint failed otherwise (a 503, a 429): an error the app shows.
public struct TokenEndpointFailed: Error {
    public let status: Int
}

/// The app's tokens and its token endpoint, outside Apollo: the password
/// grant at sign-in, the refresh grant after.
public final class TokenStore: @unchecked Sendable {
    public let hello: Hello
    private let lock = NSLock()
    private var access = ""
    private var refresh = ""
    private var expiresAt = Date.distantFuture

    public init(hello: Hello) { self.hello = hello }

    public var accessToken: String { lock.withLock { access } }
    public var refreshToken: String { lock.withLock { refresh } }
    /// Whether the access token has run out by the device's clock (`expires_in`).
    public var isExpired: Bool { lock.withLock { Date() >= expiresAt } }

    /// A grant at `/oauth/token` with the client's Basic credentials; its tokens kept.
    public func grant(_ parameters: [String: String]) async throws {
        var request = URLRequest(url: URL(string: hello.baseURL + "/oauth/token")!)
        request.httpMethod = "POST"
        request.setValue("Basic " + Data("\(hello.clientID):\(hello.clientSecret)".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        var form = URLComponents()
        form.queryItems = parameters.map { URLQueryItem(name: $0.key, value: $0.value) }
        request.httpBody = Data((form.percentEncodedQuery ?? "").utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if status == 400 || status == 401 { throw RefreshRefused(status: status) }
        guard (200..<300).contains(status) else { throw TokenEndpointFailed(status: status) }
        let tokens = try JSONDecoder().decode(TokenResponse.self, from: data)
        lock.withLock {
            access = tokens.access_token
            refresh = tokens.refresh_token ?? refresh
            expiresAt = tokens.expires_in.map { Date(timeIntervalSinceNow: $0) } ?? .distantFuture
        }
    }
}

/// What a recipe's token manager does when a request was refused for its token.
public protocol TokenManager: Sendable {
    var tokens: TokenStore { get }
    /// Renews the token after a request that carried `token` was refused.
    func renew(after token: String) async throws
    /// A sign-in started a new session.
    func signedIn() async
}

/// Adds the current token to every attempt's `URLRequest`, renewing first a
/// token that has run out by the device's clock.
public struct AuthorizationHTTPInterceptor: HTTPInterceptor {
    let manager: any TokenManager

    public func intercept(request: URLRequest, next: NextHTTPInterceptorFunction) async throws -> HTTPResponse {
        if manager.tokens.isExpired { try await manager.renew(after: manager.tokens.accessToken) }
        var request = request
        request.setValue("Bearer \(manager.tokens.accessToken)", forHTTPHeaderField: "Authorization")
        for (name, value) in CallHeaders.current where name.lowercased() != "content-type" {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return try await next(request)
    }
}

/// The app's own headers for one operation, on every attempt (plumbing of
/// the app, not the recipe: Apollo 2.x has no per-operation context).
public enum CallHeaders {
    @TaskLocal public static var current: [String: String] = [:]
}

/// Renews the token and retries the operation (`RequestChain.Retry`) when
/// its answer is refused for the token: a 401, which `ResponseCodeInterceptor`
/// turns into an error, or a GraphQL error whose `extensions.code` is
/// `UNAUTHENTICATED` in a 200 answer.
public struct ReauthenticationInterceptor: GraphQLInterceptor {
    let manager: any TokenManager

    public func intercept<Request: GraphQLRequest>(
        request: Request, next: NextInterceptorFunction<Request>
    ) async throws -> InterceptorResultStream<Request> {
        let manager = manager
        // The token this attempt goes out with (the HTTP interceptor adds the current one).
        let sent = manager.tokens.accessToken
        return await next(request)
            .map { response in
                guard response.result.errors?.contains(where: { $0.extensions?["code"] as? String == "UNAUTHENTICATED" }) == true else {
                    return response
                }
                try await manager.renew(after: sent)
                throw RequestChain<Request>.Retry(request: request)
            }
            .mapErrors { error in
                guard let refused = error as? ResponseCodeInterceptor.ResponseCodeError, refused.response.statusCode == 401 else {
                    throw error
                }
                try await manager.renew(after: sent)
                throw RequestChain<Request>.Retry(request: request)
            }
    }
}

/// The recipe's `InterceptorProvider`: Apollo's defaults (`MaxRetryInterceptor`
/// first, `ResponseCodeInterceptor`) with the reauthentication interceptor
/// and the authorization HTTP interceptor.
public struct TokenInterceptorProvider: InterceptorProvider {
    let manager: any TokenManager

    public func graphQLInterceptors<Operation: GraphQLOperation>(for operation: Operation) -> [any GraphQLInterceptor] {
        [MaxRetryInterceptor(), AutomaticPersistedQueryInterceptor(), ReauthenticationInterceptor(manager: manager)]
    }

    public func httpInterceptors<Operation: GraphQLOperation>(for operation: Operation) -> [any HTTPInterceptor] {
        [AuthorizationHTTPInterceptor(manager: manager), ResponseCodeInterceptor()]
    }
}

/// A 401 is Apollo's to read: the session does not answer its challenge
/// (FoundationNetworking's URLSession waits on a challenge nobody handles).
final class ChallengeDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        completionHandler(.performDefaultHandling, nil)
    }
}

/// The app's side of either recipe: sign in, then run each GraphQL operation
/// the case sends through an `ApolloClient` with the recipe's provider.
public struct ApolloDriver: DriverClient {
    let manager: any TokenManager
    let client: ApolloClient

    public init(hello: Hello, manager: any TokenManager) {
        self.manager = manager
        let store = ApolloStore()
        let transport = RequestChainNetworkTransport(
            urlSession: URLSession(configuration: .ephemeral, delegate: ChallengeDelegate(), delegateQueue: nil),
            interceptorProvider: TokenInterceptorProvider(manager: manager), store: store,
            endpointURL: URL(string: hello.baseURL + "/graphql")!)
        client = ApolloClient(networkTransport: transport, store: store)
    }

    public func login(username: String, password: String) async -> DriverOutcome {
        do {
            try await manager.tokens.grant(["grant_type": "password", "username": username, "password": password])
            await manager.signedIn()
            return DriverOutcome(.ok)
        } catch let refused as RefreshRefused {
            return DriverOutcome(.httpError, status: refused.status)
        } catch {
            return DriverOutcome(.transportError, message: "\(error)")
        }
    }

    public func request(_ request: DriverRequest) async -> DriverOutcome {
        guard request.path == "/graphql", request.method == "POST",
            let body = request.body.flatMap({ try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }),
            let name = body["operationName"] as? String
        else { return DriverOutcome(.unsupported, message: "Apollo sends GraphQL operations only") }
        let text = (body["variables"] as? [String: Any])?["text"] as? String ?? ""
        let client = client
        return await CallHeaders.$current.withValue(request.headers) {
            do {
                switch name {
                case CatalogueQuery.operationName: return Self.outcome(try await client.fetch(query: CatalogueQuery(), cachePolicy: .networkOnly))
                case WhoQuery.operationName: return Self.outcome(try await client.fetch(query: WhoQuery(), cachePolicy: .networkOnly))
                case LookupQuery.operationName: return Self.outcome(try await client.fetch(query: LookupQuery(), cachePolicy: .networkOnly))
                case AddNoteMutation.operationName: return Self.outcome(try await client.perform(mutation: AddNoteMutation(text: text)))
                case EmptyMutation.operationName: return Self.outcome(try await client.perform(mutation: EmptyMutation()))
                default: return DriverOutcome(.unsupported, message: "no generated operation named \(name)")
                }
            } catch {
                return Self.outcome(error)
            }
        }
    }

    /// What the app got: data (ok), or errors without data (http_error, the answer was a 200).
    static func outcome<Operation>(_ answer: GraphQLResponse<Operation>) -> DriverOutcome {
        let errors = answer.errors?.map { $0.message ?? "?" }.joined(separator: "; ")
        return answer.data != nil
            ? DriverOutcome(.ok, status: 200, message: errors) : DriverOutcome(.httpError, status: 200, message: errors ?? "no data")
    }

    /// A refused refresh (sign in again), a failed one, a refused answer, or a failure.
    static func outcome(_ error: any Error) -> DriverOutcome {
        switch error {
        case let refused as RefreshRefused:
            DriverOutcome(.reauthRequired, status: refused.status, message: "the refresh was refused: sign in again")
        case let failed as TokenEndpointFailed: DriverOutcome(.httpError, status: failed.status, message: "the refresh failed")
        case let refused as ResponseCodeInterceptor.ResponseCodeError:
            DriverOutcome(.httpError, status: refused.response.statusCode, message: "ResponseCodeError")
        case let error as MaxRetryInterceptor.MaxRetriesError: DriverOutcome(.httpError, status: 401, message: "\(error)")
        default: DriverOutcome(.transportError, message: "\(error)")
        }
    }
}
