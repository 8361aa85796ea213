import DriverProtocol
public import AuthmockCore
import Foundation
public import HTTPTypes
public import Hummingbird
public import NIOCore

/// Every answer is `{"success", "data", "error": {"code", "message"}}` with
/// numeric codes (HTTP status = code / 100), as in many Spring backends. A
/// client must refresh on 40101 only: 40102/40103 mean sign in again.
public struct EnvelopeProfile: Profile {
    public let name = ProfileName.envelope.rawValue
    public let summary = "JSON envelope {success, data, error:{code, message}} with numeric codes; refresh at POST /auth/refresh"

    public func addRoutes(to routes: ClientRoutes, mock: Authmock) {
        routes.issuing(.post, "/auth/login") { _, context in
            switch try await BackendDialect.login(context: context, mock: mock) {
            case .issued(let issued): return .issued(issued, success(Tokens(issued)))
            case .refused(let situation): return .plain(fail(situation, context: context))
            }
        }
        routes.issuing(.post, "/auth/refresh") { _, context in
            let token: String
            switch BackendDialect.fields(context, ["refreshToken"]).map({ $0["refreshToken"] }) {
            case .failure(let problem): return .plain(fail(.body(problem), context: context))
            case .success(nil): return .plain(fail(.body(.missing("refreshToken")), context: context))
            case .success(let value?): token = value
            }
            if await mock.authority.signedClaims(token) != nil {
                return .plain(fail(.accessTokenAsRefreshToken, context: context))
            }
            switch try await mock.authority.refresh(token, clientID: nil) {
            case .success(let issued): return .issued(issued, success(Tokens(issued, keeping: token)))
            case .failure(let failure): return .plain(fail(.refreshToken(failure), context: context))
            }
        }
        // These backends answer a wrong method with their own code, not a 404.
        for path in ["/auth/login", "/auth/refresh"] {
            for method in [HTTPRequest.Method.get, .put, .patch, .delete] {
                routes.on(path, method: method) { request, context in
                    fail(.methodNotAllowed(method: "\(request.method)", path: path), context: context)
                }
            }
        }
    }

    struct Tokens: Encodable {
        var accessToken: String, refreshToken: String, accessTokenExpiresIn: Int
        init(_ issued: IssuedTokens, keeping old: String = "") {
            accessToken = issued.accessToken
            refreshToken = issued.refreshToken ?? old
            accessTokenExpiresIn = issued.expiresIn
        }
    }

    /// `{"success": ..., "data": ..., "error": ...}` with explicit nulls, as such backends send them.
    struct Envelope<Data: Encodable>: Encodable {
        var data: Data?
        var error: EnvelopeFailure?
        enum CodingKeys: String, CodingKey { case success, data, error }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(error == nil, forKey: .success)
            if let data { try c.encode(data, forKey: .data) } else { try c.encodeNil(forKey: .data) }
            if let error { try c.encode(error, forKey: .error) } else { try c.encodeNil(forKey: .error) }
        }
    }

    struct EnvelopeFailure: Encodable {
        var code: Int, message: String
    }

    public func successBody<Body: Encodable>(_ body: Body) -> ByteBuffer {
        JSONResponse.bytes(Envelope(data: body, error: nil))
    }

    public func errorResponse(_ row: ErrorRow, detail: String?, headers: HTTPFields) -> Response {
        var message = row.message
        if let detail { message += ": \(detail)" }
        let envelope = Envelope<Int>(data: nil, error: EnvelopeFailure(code: Int(row.code) ?? 50000, message: message))
        return JSONResponse.encode(envelope, status: .init(code: row.status), headers: headers)
    }

    public func classify(method: HTTPRequest.Method, path: String, query: String?, headers: HTTPFields, body: ByteBuffer) -> RouteClassification {
        BackendDialect.classify(path: path, body: body, refreshPath: "/auth/refresh")
    }

    public func answer(to situation: Situation) -> ErrorAnswer {
        let error: EnvelopeError
        switch situation {
        case .notFound: return ErrorAnswer(EnvelopeError.notFound, detail: situation.detail)
        case .methodNotAllowed: return ErrorAnswer(EnvelopeError.methodNotAllowed, detail: situation.detail)
        case .malformedFraming: return ErrorAnswer(EnvelopeError.malformedFraming, detail: situation.detail)
        case .payloadTooLarge: return ErrorAnswer(EnvelopeError.payloadTooLarge, detail: situation.detail)
        case .storeUnavailable: error = .storeUnavailable
        case .internalError: error = .internalError
        case .body(.malformed): error = .malformedJSON
        case .body(.notAnObject), .body(.wrongType): return ErrorAnswer(EnvelopeError.invalidParameter, detail: situation.detail)
        case .body(.missing): return ErrorAnswer(EnvelopeError.missingParameter, detail: situation.detail)
        case .wrongCredentials: error = .wrongCredentials
        case .refreshToken(.expired): error = .refreshExpired
        case .refreshToken(.unknown): error = .refreshUnknown
        case .refreshToken(.reused): error = .refreshReused
        case .refreshToken(.revoked), .refreshToken(.clientMismatch): error = .refreshRevoked
        case .accessTokenAsRefreshToken: return ErrorAnswer(EnvelopeError.accessAsRefresh, detail: "refreshToken holds an access token")
        // Its refresh sends no access token: these never arise here.
        case .accessTokenMismatch, .bearerMissing: error = .accessInvalid
        case .noAccessToken, .accessToken(.missing): error = .missingToken
        case .accessToken(.expired): error = .accessExpired
        case .accessToken(.revoked): error = .accessRevoked
        case .accessToken(.malformed): error = .malformedToken
        case .accessToken(.wrongAlgorithm): error = .unsupportedToken
        case .accessToken(.badSignature), .accessToken(.wrongAudience), .accessToken(.wrongIssuer), .accessToken(.notYetValid): error = .accessInvalid
        case .refreshTokenAsAccessToken: error = .refreshAsAccess
        case .insufficientScope: error = .accessDenied
        }
        return ErrorAnswer(error)
    }

    public func startupHints(baseURL: String, directory: Directory) -> [String] {
        BackendDialect.loginHints(baseURL: baseURL, directory: directory) + [
            "Refresh (refresh only on error code 40101):",
            "  curl -s -H 'Content-Type: application/json' -d \"{\\\"refreshToken\\\":\\\"$REFRESH_TOKEN\\\"}\" \(baseURL)/auth/refresh",
        ]
    }
}
