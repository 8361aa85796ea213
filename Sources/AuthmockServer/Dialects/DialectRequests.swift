import AuthmockCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What dialect files share beyond their shapes: reading named body fields,
/// and the sign-in of a user, whose tokens go to the first configured client
/// (these backends authenticate users, not clients).
enum DialectRequests {
    /// The named string fields of the JSON object or form body, as parsed on
    /// arrival, each present and not empty.
    static func fields(_ context: AuthmockRequestContext, _ names: [String]) -> Result<[String: String], JSONFields.Problem> {
        switch context.route.body {
        case .json(let parsed): return parsed.flatMap { $0.strings(names) }
        case .form(.failure): return .failure(.malformed)
        case .form(.success(let form)):
            var result: [String: String] = [:]
            for name in names {
                guard let value = form[name], !value.isEmpty else { return .failure(.missing(name)) }
                result[name] = value
            }
            return .success(result)
        default:
            assertionFailure("\(context.route.kind) route classified without its body")
            return .failure(.malformed)
        }
    }

    /// The client tokens of these dialects are issued to: the first configured one.
    static func client(_ mock: Authmock) -> Client {
        mock.directory.clients.first ?? Directory.defaultClient
    }

    /// The configured client the request's `field` names (a dialect's `client_id`).
    static func client(named field: String, context: AuthmockRequestContext, mock: Authmock) -> Result<Client, Situation> {
        fields(context, [field]).mapError { .body($0) }.flatMap { values in
            let id = values[field] ?? ""
            return mock.directory.clients.first { $0.id == id }.map { .success($0) } ?? .failure(.unknownClient(id))
        }
    }

    enum LoginOutcome {
        case issued(IssuedTokens)
        /// A body problem, or wrong credentials.
        case refused(Situation)
    }

    /// A sign-in with the dialect's user name and password fields: a new login (family).
    static func login(
        context: AuthmockRequestContext, mock: Authmock, fields names: (username: String, password: String), clientField: String? = nil
    ) async throws
        -> LoginOutcome
    {
        // A backend that names its clients checks the client first (an unknown one is `client_unknown`).
        var named: Client? = nil
        if let clientField {
            switch Self.client(named: clientField, context: context, mock: mock) {
            case .failure(let situation): return .refused(situation)
            case .success(let client): named = client
            }
        }
        switch fields(context, [names.username, names.password]) {
        case .failure(let problem): return .refused(.body(problem))
        case .success(let fields):
            guard let username = fields[names.username], let password = fields[names.password],
                let user = mock.directory.authenticate(username: username, password: password)
            else {
                let unknown = mock.options.dialectOptions.unknownUser == .reveal && fields[names.username].flatMap(mock.directory.user(named:)) == nil
                return .refused(unknown ? .unknownUser : .wrongCredentials)
            }
            let issuedTo = named ?? Self.client(mock)
            return .issued(
                try await mock.authority.issue(
                    subject: user.username, clientID: issuedTo.id, scope: issuedTo.defaultScopes.joined(separator: " ")))
        }
    }
}
