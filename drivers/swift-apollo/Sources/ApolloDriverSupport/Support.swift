// Apollo iOS 1.x is not annotated for Sendable; its chain is called back from any queue by design.
@preconcurrency @_exported import Apollo
@preconcurrency @_exported import ApolloAPI
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

/// The app's tokens and its token endpoint, outside Apollo (as the seed's
/// token manager is): the password grant at sign-in, the refresh grant after.
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

    public func keep(_ tokens: TokenResponse) {
        lock.withLock {
            access = tokens.access_token
            refresh = tokens.refresh_token ?? refresh
            expiresAt = tokens.expires_in.map { Date(timeIntervalSinceNow: $0) } ?? .distantFuture
        }
    }

    /// A grant at `/oauth/token` with the client's Basic credentials; its tokens kept.
    @discardableResult
    public func grant(_ parameters: [String: String]) async throws -> TokenResponse {
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
        keep(tokens)
        return tokens
    }
}

/// What a recipe's token manager does when a request was refused for its token.
public protocol TokenManager: AnyObject, Sendable {
    var tokens: TokenStore { get }
    /// Renews the token after a request that carried `token` was refused; then `done`.
    func renew(after token: String, done: @escaping @Sendable (Result<Void, any Error>) -> Void)
    /// A sign-in started a new session.
    func signedIn()
}

/// The seed's token interceptor (Apollo 1.x's `UserManagementInterceptor`):
/// renews a token that has run out by the device's clock before sending,
/// then adds the current token to the request.
public final class TokenAddingInterceptor: ApolloInterceptor, @unchecked Sendable {
    public let id = "TokenAddingInterceptor"
    let manager: any TokenManager
    public init(manager: any TokenManager) { self.manager = manager }

    public func interceptAsync<Operation: GraphQLOperation>(
        chain: any RequestChain, request: HTTPRequest<Operation>, response: HTTPResponse<Operation>?,
        completion: @escaping (Result<GraphQLResult<Operation.Data>, any Error>) -> Void
    ) {
        nonisolated(unsafe) let completion = completion
        nonisolated(unsafe) let send = { [manager] in
            request.addHeader(name: "Authorization", value: "Bearer \(manager.tokens.accessToken)")
            chain.proceedAsync(request: request, response: response, interceptor: self, completion: completion)
        }
        guard manager.tokens.isExpired else { return send() }
        manager.renew(after: manager.tokens.accessToken) { result in
            switch result {
            case .success: send()
            case .failure(let error): chain.handleErrorAsync(error, request: request, response: response, completion: completion)
            }
        }
    }
}

/// The app's own headers for one operation (its `RequestContext`), on every attempt.
public struct CallHeaders: RequestContext {
    public let headers: [String: String]
}

/// Adds the headers the app gave the operation (plumbing of the app, not the recipe).
public final class CallHeadersInterceptor: ApolloInterceptor, @unchecked Sendable {
    public let id = "CallHeadersInterceptor"
    public init() {}

    public func interceptAsync<Operation: GraphQLOperation>(
        chain: any RequestChain, request: HTTPRequest<Operation>, response: HTTPResponse<Operation>?,
        completion: @escaping (Result<GraphQLResult<Operation.Data>, any Error>) -> Void
    ) {
        for (name, value) in (request.context as? CallHeaders)?.headers ?? [:] where name.lowercased() != "content-type" {
            request.addHeader(name: name, value: value)
        }
        chain.proceedAsync(request: request, response: response, interceptor: self, completion: completion)
    }
}

/// Renews and retries the operation when its answer is refused for the
/// token: a 401 (before `ResponseCodeInterceptor` fails it), or, after
/// parsing, a GraphQL error whose `extensions.code` is `UNAUTHENTICATED`.
public final class ReauthenticatingInterceptor: ApolloInterceptor, @unchecked Sendable {
    public enum Stage: Sendable { case httpStatus, graphQLErrors }
    public let id: String
    let manager: any TokenManager
    let stage: Stage
    public init(manager: any TokenManager, stage: Stage) {
        self.manager = manager
        self.stage = stage
        id = "ReauthenticatingInterceptor-\(stage)"
    }

    public func interceptAsync<Operation: GraphQLOperation>(
        chain: any RequestChain, request: HTTPRequest<Operation>, response: HTTPResponse<Operation>?,
        completion: @escaping (Result<GraphQLResult<Operation.Data>, any Error>) -> Void
    ) {
        let refused: Bool
        switch stage {
        case .httpStatus: refused = response?.httpResponse.statusCode == 401
        case .graphQLErrors:
            refused = response?.parsedResponse?.errors?.contains { $0.extensions?["code"] as? String == "UNAUTHENTICATED" } == true
        }
        guard refused else { return chain.proceedAsync(request: request, response: response, interceptor: self, completion: completion) }
        let sent = (request.additionalHeaders["Authorization"] ?? "").replacingOccurrences(of: "Bearer ", with: "")
        nonisolated(unsafe) let completion = completion
        manager.renew(after: sent) { result in
            switch result {
            case .success: chain.retry(request: request, completion: completion)
            case .failure(let error): chain.handleErrorAsync(error, request: request, response: response, completion: completion)
            }
        }
    }
}

/// The seed's `InterceptorProvider`: Apollo's default chain with the token
/// interceptor before the network, the 401 check right after it, and the
/// in-body check after the JSON is parsed.
public final class TokenInterceptorProvider: DefaultInterceptorProvider, @unchecked Sendable {
    let manager: any TokenManager
    public init(manager: any TokenManager) {
        self.manager = manager
        // Apollo's default callback queue is the main queue: serial, as a session's delegate queue must be.
        let callbacks = OperationQueue()
        callbacks.maxConcurrentOperationCount = 1
        super.init(client: URLSessionClient(callbackQueue: callbacks), store: ApolloStore())
    }

    public override func interceptors<Operation: GraphQLOperation>(for operation: Operation) -> [any ApolloInterceptor] {
        var chain = super.interceptors(for: operation)
        let network = chain.firstIndex { $0 is NetworkFetchInterceptor } ?? 0
        chain.insert(ReauthenticatingInterceptor(manager: manager, stage: .httpStatus), at: network + 1)
        chain.insert(TokenAddingInterceptor(manager: manager), at: network)
        chain.insert(CallHeadersInterceptor(), at: network)
        let parsing = (chain.firstIndex { $0 is JSONResponseParsingInterceptor } ?? chain.count - 1)
        chain.insert(ReauthenticatingInterceptor(manager: manager, stage: .graphQLErrors), at: parsing + 1)
        return chain
    }
}

/// The app's side of either recipe: sign in, then run each GraphQL operation
/// the case sends through an `ApolloClient` with the recipe's provider.
public struct ApolloDriver: DriverClient, @unchecked Sendable {
    let manager: any TokenManager
    let client: ApolloClient

    public init(hello: Hello, manager: any TokenManager) {
        self.manager = manager
        let transport = RequestChainNetworkTransport(
            interceptorProvider: TokenInterceptorProvider(manager: manager), endpointURL: URL(string: hello.baseURL + "/graphql")!)
        client = ApolloClient(networkTransport: transport, store: ApolloStore())
    }

    public func login(username: String, password: String) async -> DriverOutcome {
        do {
            try await manager.tokens.grant(["grant_type": "password", "username": username, "password": password])
            manager.signedIn()
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
        let variables = body["variables"] as? [String: Any] ?? [:]
        let context = CallHeaders(headers: request.headers)
        switch name {
        case CatalogueQuery.operationName: return await fetch(CatalogueQuery(), context)
        case WhoQuery.operationName: return await fetch(WhoQuery(), context)
        case LookupQuery.operationName: return await fetch(LookupQuery(), context)
        case AddNoteMutation.operationName: return await perform(AddNoteMutation(text: variables["text"] as? String ?? ""), context)
        case EmptyMutation.operationName: return await perform(EmptyMutation(), context)
        default: return DriverOutcome(.unsupported, message: "no generated operation named \(name)")
        }
    }

    func fetch<Query: GraphQLQuery>(_ query: Query, _ context: CallHeaders) async -> DriverOutcome {
        await withCheckedContinuation { continuation in
            client.fetch(query: query, cachePolicy: .fetchIgnoringCacheCompletely, context: context, queue: .global()) {
                continuation.resume(returning: Self.outcome($0))
            }
        }
    }

    func perform<Mutation: GraphQLMutation>(_ mutation: Mutation, _ context: CallHeaders) async -> DriverOutcome {
        await withCheckedContinuation { continuation in
            client.perform(mutation: mutation, publishResultToStore: false, context: context, queue: .global()) {
                continuation.resume(returning: Self.outcome($0))
            }
        }
    }

    /// What the app got: data (ok), errors without data (http_error, the
    /// answer was a 200), a refused refresh (sign in again), or a failure.
    static func outcome<Data>(_ result: Result<GraphQLResult<Data>, any Error>) -> DriverOutcome {
        switch result {
        case .success(let answer):
            let errors = answer.errors?.map { $0.message ?? "?" }.joined(separator: "; ")
            return answer.data != nil
                ? DriverOutcome(.ok, status: 200, message: errors) : DriverOutcome(.httpError, status: 200, message: errors ?? "no data")
        case .failure(let refused as RefreshRefused):
            return DriverOutcome(.reauthRequired, status: refused.status, message: "the refresh was refused: sign in again")
        case .failure(let failed as TokenEndpointFailed):
            return DriverOutcome(.httpError, status: failed.status, message: "the refresh failed")
        case .failure(ResponseCodeInterceptor.ResponseCodeError.invalidResponseCode(let response, _)):
            return DriverOutcome(.httpError, status: response?.statusCode, message: "ResponseCodeError")
        case .failure(let error as MaxRetryInterceptor.RetryError):
            return DriverOutcome(.httpError, status: 401, message: "\(error)")
        case .failure(let error):
            return DriverOutcome(.transportError, message: "\(error)")
        }
    }
}
