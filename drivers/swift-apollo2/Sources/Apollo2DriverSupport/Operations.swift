// The operations authmock's GraphQL cases send (scenarios/11.*.yaml), written
// as Apollo iOS 2.x codegen writes an operation and its schema metadata. The
// selection sets select nothing: the driver reports whether `data` came back
// and which errors did, which is all a case judges.
@_spi(Execution) @_spi(Unsafe) import ApolloAPI

public enum AuthmockGraphQL: SchemaMetadata {
    public static var configuration: any SchemaConfiguration.Type { Configuration.self }
    public static func objectType(forTypename typename: String) -> Object? {
        switch typename {
        case "Query": Query
        case "Mutation": Mutation
        default: nil
        }
    }
    public static let Query = Object(typename: "Query", implementedInterfaces: [])
    public static let Mutation = Object(typename: "Mutation", implementedInterfaces: [])
    public enum Configuration: SchemaConfiguration {
        public static func cacheKeyInfo(for type: Object, object: ObjectData) -> CacheKeyInfo? { nil }
    }
}

/// The root of every answer: the operation's `data`, whatever it selected.
public struct AnyData: RootSelectionSet {
    public typealias Schema = AuthmockGraphQL
    @_spi(Unsafe) public let __data: DataDict
    @_spi(Unsafe) public init(_dataDict: DataDict) { __data = _dataDict }
    @_spi(Execution) public static var __parentType: any ParentType { AuthmockGraphQL.Query }
    @_spi(Execution) public static var __fulfilledFragments: [any SelectionSet.Type] { [AnyData.self] }
}

public final class CatalogueQuery: GraphQLQuery {
    public static let operationName = "Catalogue"
    public static let operationDocument = OperationDocument(definition: .init("query Catalogue { items { id name } }"))
    public init() {}
    @_spi(Unsafe) public var __variables: Variables? { nil }
    public typealias Data = AnyData
}

public final class WhoQuery: GraphQLQuery {
    public static let operationName = "Who"
    public static let operationDocument = OperationDocument(definition: .init("query Who { me { sub } }"))
    public init() {}
    @_spi(Unsafe) public var __variables: Variables? { nil }
    public typealias Data = AnyData
}

public final class LookupQuery: GraphQLQuery {
    public static let operationName = "Lookup"
    public static let operationDocument = OperationDocument(definition: .init(#"query Lookup { me { sub } item(id: "item-9") { id name } }"#))
    public init() {}
    @_spi(Unsafe) public var __variables: Variables? { nil }
    public typealias Data = AnyData
}

public final class AddNoteMutation: GraphQLMutation {
    public static let operationName = "AddNote"
    public static let operationDocument = OperationDocument(
        definition: .init("mutation AddNote($text: String!) { createNote(text: $text) { id text } }"))
    public let text: String
    public init(text: String) { self.text = text }
    @_spi(Unsafe) public var __variables: Variables? { ["text": text] }
    public typealias Data = AnyData
}

public final class EmptyMutation: GraphQLMutation {
    public static let operationName = "Empty"
    public static let operationDocument = OperationDocument(definition: .init(#"mutation Empty { createNote(text: "") { id } }"#))
    public init() {}
    @_spi(Unsafe) public var __variables: Variables? { nil }
    public typealias Data = AnyData
}
