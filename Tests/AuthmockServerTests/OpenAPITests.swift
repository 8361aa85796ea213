import AuthmockCore
import AuthmockModel
@testable import AuthmockServer
import DriverProtocol
import Foundation
import Testing
import Yams

/// docs/openapi.yaml and the routes the server registers are the same set:
/// every operation the document tags for a dialect is routed in that
/// dialect, and every path the dialect routes is in the document.
struct OpenAPITests {
    static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/openapi.yaml")
    static let methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
    /// Tags that are not a dialect: operations every dialect serves.
    static let everywhere: Set<String> = ["every dialect", "control", "mock"]

    struct Operation: Hashable, CustomStringConvertible {
        var method: String
        var path: String
        var description: String { "\(method) \(path)" }
    }

    /// Operations of the document with their tags; `{resource}` is the router's `**`.
    static func operations() throws -> [(operation: Operation, tags: [String])] {
        let text = try String(contentsOf: document, encoding: .utf8)
        let root = try #require(try Yams.load(yaml: text) as? [String: Any])
        let paths = try #require(root["paths"] as? [String: Any])
        var found: [(Operation, [String])] = []
        for (path, item) in paths {
            let operations = try #require(item as? [String: Any], "\(path)")
            for method in methods {
                guard let operation = operations[method] as? [String: Any] else { continue }
                let tags = try #require(operation["tags"] as? [String], "\(method) \(path) has no tags")
                found.append((Operation(method: method.uppercased(), path: path.replacingOccurrences(of: "{resource}", with: "**")), tags))
            }
        }
        return found
    }

    /// What a dialect's router serves: HEAD beside GET is implied, and the
    /// control API's catch-all (its 404 in the control shape) is not an operation.
    static func served(_ profile: CaseProfile) async throws -> Set<Operation> {
        var options = ServerOptions(signingKey: .random())
        options.profile = profile.rawValue
        let router = AuthmockApplication.router(for: try await Authmock(options: options))
        let all = Set(router.routes.map { Operation(method: $0.method.rawValue, path: $0.path.description) })
        return all.filter {
            $0.path != ControlOperation.prefix + "/**" && !($0.method == "HEAD" && all.contains(Operation(method: "GET", path: $0.path)))
        }
    }

    @Test(arguments: CaseProfile.allCases)
    func theDocumentAndTheRoutesAgree(_ profile: CaseProfile) async throws {
        let documented = try Self.operations().filter { !Self.everywhere.isDisjoint(with: $0.tags) || $0.tags.contains(profile.rawValue) }.map(
            \.operation)
        let served = try await Self.served(profile)
        let missing = documented.filter { !served.contains($0) }
        #expect(missing.isEmpty, "documented for \(profile.rawValue) but not routed: \(missing)")
        let documentedPaths = Set(documented.map(\.path))
        let undocumented = Set(served.map(\.path)).subtracting(documentedPaths).sorted()
        #expect(undocumented.isEmpty, "routed in \(profile.rawValue) but not in docs/openapi.yaml: \(undocumented)")
    }

    /// Every control route is an operation of the document, with its method, and no other.
    @Test func theControlAPIIsDocumentedRouteForRoute() throws {
        let documented = Set(try Self.operations().filter { $0.tags.contains("control") }.map(\.operation))
        let routes = Set(ControlOperation.allCases.map { Operation(method: $0.method, path: ControlOperation.prefix + $0.path) })
        #expect(documented == routes, "only documented: \(documented.subtracting(routes)); only routed: \(routes.subtracting(documented))")
    }

    @Test func everyTagIsADialectOrAGroup() throws {
        let known = Self.everywhere.union(CaseProfile.allCases.map(\.rawValue))
        for (operation, tags) in try Self.operations() {
            #expect(!tags.isEmpty && Set(tags).isSubset(of: known), "\(operation): \(tags)")
        }
    }
}
