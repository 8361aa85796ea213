@_exported import AlamofireCorelibsSupport
@_exported import DriverKit
import Foundation
@preconcurrency @_exported import Moya
@_exported import RxMoya
@_exported import RxSwift

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A token endpoint answer (RFC 6749 section 5.1).
public struct TokenResponse: Decodable, Sendable {
    public var access_token: String
    public var refresh_token: String?
    public var expires_in: Double?
}

/// The token endpoint as a Moya target: the password grant at sign-in, the
/// refresh grant after (RFC 6749 sections 4.3 and 6), with the client's Basic credentials.
public struct TokenGrant: TargetType {
    public let hello: Hello
    public let parameters: [String: String]
    public var baseURL: URL { URL(string: hello.baseURL)! }
    public var path: String { "/oauth/token" }
    public var method: Moya.Method { .post }
    public var task: Moya.Task { .requestParameters(parameters: parameters, encoding: URLEncoding.httpBody) }
    public var headers: [String: String]? {
        ["Authorization": "Basic " + Data("\(hello.clientID):\(hello.clientSecret)".utf8).base64EncodedString()]
    }
}

/// One application call as a Moya target: the runner's method, path (and
/// query), headers and body. `AccessTokenAuthorizable` with `.bearer`: the
/// target wants `AccessTokenPlugin`'s header.
public struct APICall: TargetType, AccessTokenAuthorizable {
    public let baseURL: URL
    public let path: String
    public let method: Moya.Method
    public let task: Moya.Task
    public let headers: [String: String]?
    public var authorizationType: AuthorizationType? { .bearer }

    public init(_ request: DriverRequest, hello: Hello) {
        let components = URLComponents(string: hello.baseURL + request.path)
        baseURL = URL(string: hello.baseURL)!
        path = components?.path ?? request.path
        method = Moya.Method(rawValue: request.method)
        headers = request.headers
        var query: [String: Any] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let body = request.body.map { Data($0.utf8) }
        switch (body, query.isEmpty) {
        case (nil, true): task = .requestPlain
        case (let body?, true): task = .requestData(body)
        case (let body, false): task = .requestCompositeData(bodyData: body ?? Data(), urlParameters: query)
        }
    }
}

/// The tokens of the signed-in user, shared by every call.
public final class TokenStore: @unchecked Sendable {
    private let lock = NSLock()
    private var access = ""
    private var refresh = ""
    public init() {}
    public var accessToken: String { lock.withLock { access } }
    public var refreshToken: String { lock.withLock { refresh } }
    public func keep(_ tokens: TokenResponse) {
        lock.withLock {
            access = tokens.access_token
            refresh = tokens.refresh_token ?? refresh
        }
    }
}

/// The refresh was refused (400 or 401 from the token endpoint): the
/// refresh token is dead and the app shows its sign-in screen. Every
/// recipe's refresh function ends the session this way.
public struct RefreshRefused: Error {
    public let status: Int
}

/// A call answered 401 that the recipe gave up on.
public struct Unauthorized: Error {
    public let response: Response
    public init(_ response: Response) { self.response = response }
}

/// The Alamofire session a provider is given: Moya's own default
/// (`MoyaProvider.defaultAlamofireSession()`: the default configuration with
/// Alamofire's headers, requests started by Moya), built behind the corelibs
/// delegate of ../swift-alamofire so that Alamofire runs unmodified on Linux.
public func alamofireSession() -> Session {
    corelibsSafeSession(configuration: URLSessionConfiguration.af.default, startRequestsImmediately: false)
}

/// What the recipes share: where the server is, the user's tokens, and the token endpoint.
public final class MoyaSession: Sendable {
    public let hello: Hello
    public let tokens = TokenStore()
    /// The token endpoint's own provider: no plugin, so no bearer token on it.
    let auth = MoyaProvider<TokenGrant>(session: alamofireSession())

    public init(hello: Hello) {
        self.hello = hello
        // RxSwift prints an error nobody subscribed to handle on stdout, which
        // is the driver protocol's channel: the app's console is stderr here.
        Hooks.defaultErrorHandler = { _, error in
            FileHandle.standardError.write(Data("Unhandled error happened: \(error)\n".utf8))
        }
    }

    /// A grant at the token endpoint; its tokens kept when it succeeds.
    public func grant(_ parameters: [String: String]) -> Single<TokenResponse> {
        auth.rx.request(TokenGrant(hello: hello, parameters: parameters))
            .flatMap { response -> Single<TokenResponse> in
                if response.statusCode == 400 || response.statusCode == 401 { return .error(RefreshRefused(status: response.statusCode)) }
                return .just(try response.filterSuccessfulStatusCodes().map(TokenResponse.self))
            }
            .do(onSuccess: { [tokens] in tokens.keep($0) })
    }

    /// The refresh grant with the refresh token held now.
    public func refresh() -> Single<TokenResponse> {
        grant(["grant_type": "refresh_token", "refresh_token": tokens.refreshToken])
    }
}

/// The app's side of every recipe: sign in with the password grant, then
/// make each call through the recipe's `send` and report what the app saw.
public struct MoyaDriver: DriverClient {
    public let session: MoyaSession
    public let send: @Sendable (APICall) -> Single<Response>
    /// Told after each sign-in (a recipe that remembers a refused refresh forgets it).
    public let signedIn: @Sendable () -> Void

    public init(session: MoyaSession, signedIn: @escaping @Sendable () -> Void = {}, send: @escaping @Sendable (APICall) -> Single<Response>) {
        self.session = session
        self.signedIn = signedIn
        self.send = send
    }

    public func login(username: String, password: String) async -> DriverOutcome {
        do {
            _ = try await session.grant(["grant_type": "password", "username": username, "password": password]).value
            signedIn()
            return DriverOutcome(.ok)
        } catch let refused as RefreshRefused {
            return DriverOutcome(.httpError, status: refused.status, message: "the sign-in was refused")
        } catch {
            return Self.outcome(of: error)
        }
    }

    public func request(_ request: DriverRequest) async -> DriverOutcome {
        do {
            let response = try await send(APICall(request, hello: session.hello)).value
            let body = String(decoding: response.data, as: UTF8.self)
            return DriverOutcome((200..<300).contains(response.statusCode) ? .ok : .httpError, status: response.statusCode, body: body)
        } catch {
            return Self.outcome(of: error)
        }
    }

    /// What the app sees of an error a call ended with.
    static func outcome(of error: any Error) -> DriverOutcome {
        switch error {
        case let refused as RefreshRefused:
            return DriverOutcome(.reauthRequired, status: refused.status, message: "the refresh was refused: sign in again")
        case let unauthorized as Unauthorized:
            return DriverOutcome(.httpError, status: 401, body: String(decoding: unauthorized.response.data, as: UTF8.self))
        case MoyaError.statusCode(let response):
            return DriverOutcome(.httpError, status: response.statusCode, message: "\(error)")
        default:
            return DriverOutcome(.transportError, message: "\(error)")
        }
    }
}

// MoyaProvider is not marked Sendable, but apps call one provider from any
// thread (its state is the Alamofire session's, which is thread-safe).
extension MoyaProvider: @retroactive @unchecked Sendable {}
