// Types for wink-lemmatizer (a dev dependency: only the grouping evaluation's variant uses it).
declare module 'wink-lemmatizer' {
  const lemmatize: {
    verb(word: string): string;
    noun(word: string): string;
    adjective(word: string): string;
  };
  export default lemmatize;
}
