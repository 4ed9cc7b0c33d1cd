// Request and response schemas of sanctions screening (D18, D4, D14).
import { type Static, Type } from '@sinclair/typebox';
import { UUID_SCHEMA_PATTERN } from '../platform/ids.ts';
import { component } from '../platform/openapi.ts';
import { FilterList, pageSchema, searchBodySchema } from '../platform/search.ts';
import { StoredText, StringEnum } from '../webhooks/api-schemas.ts';
import { ENTRY_TYPES } from './formats/types.ts';

export const SCREENED_TYPES = ['individual', 'organisation'] as const;
export const MATCH_STATUSES = ['no_match', 'potential_match', 'confirmed_match', 'cleared'] as const;
export type MatchStatus = (typeof MATCH_STATUSES)[number];
export const REVIEW_DECISIONS = ['confirmed_match', 'cleared'] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];
export const LIST_FORMATS = ['ofac-sdn-csv', 'opensanctions-csv'] as const;
export type ListFormat = (typeof LIST_FORMATS)[number];

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);

const exampleHit = {
  list: 'ofac-sdn',
  entry_id: '1001',
  matched_name: 'PETROV, Ivan Sergeyevich',
  score: '0.96',
  entity_type: 'individual',
  programs: ['RUSSIA-EO14024'],
  countries: ['RU'],
};

export const Hit = component(
  'ScreeningHit',
  Type.Object(
    {
      list: Type.String({ description: 'Code of the list the entry is on (GET /api/v1/sanctions/lists).' }),
      entry_id: Type.String({
        description: "The publisher's id of the entry (OFAC ent_num, OpenSanctions id).",
      }),
      matched_name: Type.String({ description: "The entry's name or alias that matched best, as listed." }),
      score: Type.String({
        pattern: '^(0\\.\\d{2}|1\\.00)$',
        description: 'Similarity 0..1, 2 decimals; at least the screening threshold.',
      }),
      entity_type: StringEnum(ENTRY_TYPES),
      programs: Type.Array(Type.String(), { description: 'Sanctions programs of the entry.' }),
      countries: Type.Array(Type.String(), { description: 'ISO 3166-1 alpha-2 countries of the entry.' }),
    },
    { examples: [exampleHit] },
  ),
);
export type HitView = Static<typeof Hit>;

const exampleScreening = {
  id: 'scr_01JD3V6M2Q8W1X4Y5Z6A7B8C9D',
  entity_type: 'individual',
  name: 'Ivan S. Petrov',
  date_of_birth: '1965-03-12',
  country: 'RU',
  match_status: 'potential_match',
  hits: [exampleHit],
  threshold: '0.85',
  lists_version: 'ofac-sdn:3,sandbox:1',
  source_object_type: null,
  source_object_id: null,
  external_id: 'kyc-4711',
  reviewed_at: null,
  review_note: null,
  created_at: '2026-11-23T09:30:00.000Z',
  updated_at: '2026-11-23T09:30:00.000Z',
};

export const Screening = component(
  'Screening',
  Type.Object(
    {
      id: Type.String({ description: '`scr_` + ULID (D14).' }),
      entity_type: StringEnum(SCREENED_TYPES),
      name: Type.String(),
      date_of_birth: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
      country: NullableString,
      match_status: StringEnum(MATCH_STATUSES, {
        description:
          'no_match: no hit. potential_match: at least one hit, waiting for the operator. confirmed_match or ' +
          'cleared: the operator decided (D18).',
      }),
      hits: Type.Array(Hit, { description: 'Entries scoring at least `threshold`, best first, at most 10.' }),
      threshold: Type.String({
        description: 'The threshold the screening used (SANCTIONS_MATCH_THRESHOLD).',
      }),
      lists_version: Type.String({
        description: 'The lists and versions screened against, `code:version` joined by commas.',
      }),
      source_object_type: Type.Union([Type.String(), Type.Null()], {
        description:
          'The resource that caused the screening (`beneficiary`, `transfer`); null when screened directly.',
      }),
      source_object_id: NullableString,
      external_id: NullableString,
      reviewed_at: NullableTimestamp,
      review_note: NullableString,
      created_at: Timestamp,
      updated_at: Timestamp,
    },
    { description: 'A sanctions screening of one name (D18).', examples: [exampleScreening] },
  ),
);
export type ScreeningView = Static<typeof Screening>;

export const CreateScreeningBody = component(
  'CreateScreeningRequest',
  Type.Object(
    {
      entity_type: StringEnum(SCREENED_TYPES, {
        description: 'individual: screened against individuals; organisation: against every other entry.',
      }),
      name: StoredText({ minLength: 1, maxLength: 300, description: 'The name to screen, in any script.' }),
      date_of_birth: Type.Optional(
        Type.String({
          pattern: '^\\d{4}-\\d{2}-\\d{2}$',
          description: 'Individuals only: YYYY-MM-DD. A date the entry contradicts lowers its score.',
          examples: ['1965-03-12'],
        }),
      ),
      country: Type.Optional(
        Type.String({
          pattern: '^[A-Z]{2}$',
          description: 'ISO 3166-1 alpha-2. A country the entry contradicts lowers its score.',
          examples: ['RU'],
        }),
      ),
      external_id: Type.Optional(StoredText({ minLength: 1, maxLength: 128 })),
    },
    {
      additionalProperties: false,
      examples: [
        { entity_type: 'individual', name: 'Ivan S. Petrov', date_of_birth: '1965-03-12', country: 'RU' },
      ],
    },
  ),
);
export type CreateScreeningInput = Static<typeof CreateScreeningBody>;

export const ReviewBody = component(
  'ReviewScreeningRequest',
  Type.Object(
    {
      decision: StringEnum(REVIEW_DECISIONS, {
        description: 'confirmed_match: the name is the listed party. cleared: it is not.',
      }),
      // A note of spaces records no reason: D23 logs each decision with its grounds.
      note: Type.String({
        minLength: 1,
        maxLength: 2000,
        pattern: '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$',
        description: 'Why: kept with the screening. Not blank.',
      }),
    },
    {
      additionalProperties: false,
      examples: [{ decision: 'cleared', note: 'Different date of birth and nationality; passport checked.' }],
    },
  ),
);
export type ReviewInput = Static<typeof ReviewBody>;

/** The sandbox simulation takes the operator's body with the note optional. */
export const SandboxReviewBody = component(
  'SandboxReviewScreeningRequest',
  Type.Object(
    {
      decision: StringEnum(REVIEW_DECISIONS),
      note: Type.Optional(StoredText({ minLength: 1, maxLength: 2000 })),
    },
    { additionalProperties: false, examples: [{ decision: 'cleared' }] },
  ),
);
export type SandboxReviewInput = Static<typeof SandboxReviewBody>;

export const SCREENING_SORT_KEYS = ['id', 'created_at', 'updated_at'] as const;
export type ScreeningSortKey = (typeof SCREENING_SORT_KEYS)[number];

export const ScreeningSearchBody = component(
  'ScreeningSearchRequest',
  searchBodySchema(
    {
      match_status: FilterList(StringEnum(MATCH_STATUSES)),
      entity_type: FilterList(StringEnum(SCREENED_TYPES)),
      source_object_type: FilterList(StoredText({ maxLength: 64 })),
      source_object_id: FilterList(StoredText({ maxLength: 64 })),
      external_id: FilterList(StoredText({ maxLength: 128 })),
    },
    SCREENING_SORT_KEYS,
  ),
);
export type ScreeningSearchInput = Static<typeof ScreeningSearchBody>;
export type ScreeningFilters = NonNullable<ScreeningSearchInput['filters']>;

export const ScreeningPage = component('ScreeningPage', pageSchema(Screening));

export const ScreeningIdParams = Type.Object({
  screening_id: Type.String({
    description: 'The screening id (`scr_...`). A malformed id is 404.',
    examples: [exampleScreening.id],
  }),
});

/** The compliance officer's queue holds at most this many screenings per answer. */
export const PENDING_SCREENINGS_MAX = 500;

export const PendingScreeningsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.String({
        pattern: '^(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$',
        description: `At most this many screenings, the oldest (1..${PENDING_SCREENINGS_MAX}, default ${PENDING_SCREENINGS_MAX}).`,
        examples: ['50'],
      }),
    ),
    organisation_id: Type.Optional(
      Type.String({
        pattern: UUID_SCHEMA_PATTERN,
        description: "Only this organisation's screenings (none for an organisation that has none).",
        examples: ['0b0f6a3e-6f1c-4a53-9d4e-2f7c8a1b9c10'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type PendingScreeningsQueryInput = Static<typeof PendingScreeningsQuery>;

export const PendingScreening = component(
  'PendingScreening',
  Type.Intersect(
    [
      Screening,
      Type.Object({
        organisation_id: Type.String({
          format: 'uuid',
          description: 'The organisation whose screening it is (a client sees only its own, without this).',
        }),
      }),
    ],
    {
      description:
        "A screening waiting for the operator's review: the screening as GET " +
        '/api/v1/sanctions/screenings/{id} shows it, and its organisation (D18).',
      examples: [
        {
          ...exampleScreening,
          source_object_type: 'beneficiary',
          source_object_id: 'ben_01JD3V6M2Q8W1X4Y5Z6A7B8C9E',
          external_id: null,
          organisation_id: '0b0f6a3e-6f1c-4a53-9d4e-2f7c8a1b9c10',
        },
      ],
    },
  ),
);
export type PendingScreeningView = Static<typeof PendingScreening>;

export const SanctionsList = component(
  'SanctionsList',
  Type.Object(
    {
      code: Type.String(),
      name: Type.String(),
      entries: Type.Integer({ minimum: 0 }),
      aliases: Type.Integer({ minimum: 0 }),
      version: Type.Integer({ minimum: 1, description: 'Goes up by one with every import of the list.' }),
      imported_at: Timestamp,
    },
    {
      examples: [
        {
          code: 'ofac-sdn',
          name: 'OFAC Specially Designated Nationals',
          entries: 18210,
          aliases: 21987,
          version: 3,
          imported_at: '2026-11-23T06:00:00.000Z',
        },
      ],
    },
  ),
);
export type SanctionsListView = Static<typeof SanctionsList>;

export const LIST_CODE_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

export const ListCodeParams = Type.Object({
  code: Type.String({
    pattern: LIST_CODE_PATTERN,
    description: 'The list code: lower-case letters, digits, "-" and "_".',
    examples: ['ofac-sdn'],
  }),
});

const FileText = Type.String({ description: 'The whole file as text.' });

export const ImportListBody = component(
  'ImportSanctionsListRequest',
  Type.Object(
    {
      format: StringEnum(LIST_FORMATS, {
        description:
          'ofac-sdn-csv: `files` holds sdn.csv, alt.csv and add.csv, and sdn_comments.csv when the import has ' +
          'it (the Remarks that overflow sdn.csv). opensanctions-csv: `files` holds targets.simple.csv.',
      }),
      name: Type.Optional(
        StoredText({ minLength: 1, maxLength: 200, description: 'Shown by the lists endpoint.' }),
      ),
      files: Type.Object(
        {
          'sdn.csv': Type.Optional(FileText),
          'alt.csv': Type.Optional(FileText),
          'add.csv': Type.Optional(FileText),
          'sdn_comments.csv': Type.Optional(FileText),
          'targets.simple.csv': Type.Optional(FileText),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
);
export type ImportListInput = Static<typeof ImportListBody>;
