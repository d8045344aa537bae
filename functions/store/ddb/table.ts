/**
 * The one DynamoDB table (single-table design, see docs/items.md). This definition is
 * shared by cdk/ (the deployed table) and local/ (DynamoDB Local), so both always agree.
 */
export const TABLE_KEYS = { pk: 'pk', sk: 'sk' } as const;

export const GSIS = [
  { name: 'gsi1', pk: 'gsi1pk', sk: 'gsi1sk' },
  { name: 'gsi2', pk: 'gsi2pk', sk: 'gsi2sk' },
] as const;

export const TTL_ATTRIBUTE = 'ttl';

/**
 * The table's stream: every item's new image (the change feed's processor reads the feed
 * items from it; docs/consistency.md, "The change feed"). NEW_IMAGE: a feed item is only ever
 * inserted, and nothing else is read from the stream.
 */
export const STREAM_VIEW_TYPE = 'NEW_IMAGE' as const;

/**
 * CreateTable input for DynamoDB Local (on-demand, both GSIs projecting ALL, the stream).
 * `stream: false` leaves the stream off: only the change feed reads it, and DynamoDB
 * Local pays for every stream record on one thread, however many tables hold streams
 * (a test run's hundreds of tables made every write of every test wait for it).
 */
export function createTableInput(tableName: string, opts: { stream?: boolean } = {}) {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      { AttributeName: TABLE_KEYS.pk, AttributeType: 'S' as const },
      { AttributeName: TABLE_KEYS.sk, AttributeType: 'S' as const },
      ...GSIS.flatMap((g) => [
        { AttributeName: g.pk, AttributeType: 'S' as const },
        { AttributeName: g.sk, AttributeType: 'S' as const },
      ]),
    ],
    KeySchema: [
      { AttributeName: TABLE_KEYS.pk, KeyType: 'HASH' as const },
      { AttributeName: TABLE_KEYS.sk, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: GSIS.map((g) => ({
      IndexName: g.name,
      KeySchema: [
        { AttributeName: g.pk, KeyType: 'HASH' as const },
        { AttributeName: g.sk, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'ALL' as const },
    })),
    ...(opts.stream === false ? {} : { StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE } }),
  };
}
